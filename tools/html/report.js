/* Mnemo HTML report: the page script (placeholder until the viewer lands). */
"use strict";
