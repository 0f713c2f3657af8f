# Small inputs of the bench programs, for tests that run every bench program (tests/workers,
# tests/dependence): each run takes well under a second yet goes through every phase of the
# program.  Sourced; `small_args NAME` prints the arguments, or fails for a program without an
# entry, so that a new bench program cannot be skipped silently: add it here.
small_args() {
	case $1 in
	aos) echo "3000 20" ;;
	bintree) echo "12 3" ;;
	graph) echo "3000 4" ;;
	hashtable) echo "30000" ;;
	histogram) echo "30000 4" ;;
	linkedlist) echo "4000" ;;
	matmul) echo "48" ;;
	stencil) echo "64 6" ;;
	sqlite) echo "200" ;;   # bench/sqlite/driver.c, not in this folder: 2 million events
	*) return 1 ;;
	esac
}
