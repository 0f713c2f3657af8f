long add_all(const long *v, int n);
long mul_all(const long *v, int n);
