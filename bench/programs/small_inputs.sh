# Inputs of the bench programs. Small ones, for tests that run every bench program (tests/workers,
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

# The harness's inputs (bench/run.sh without --quick): each program runs about 0.3 s natively
# (SQLite about 1 s, 200,000 orders), so that the whole table, peers and scaling included, fits the
# overhead issue's time budget as nearly as the slow columns allow; the programs' own defaults
# are about three times longer.  `bench_args NAME` prints them, or fails like small_args.
bench_args() {
	case $1 in
	aos) echo "100000 1000" ;;
	bintree) echo "20 4" ;;
	graph) echo "100000 25" ;;
	hashtable) echo "8000000" ;;
	histogram) echo "4000000 125" ;;
	linkedlist) echo "100000" ;;
	matmul) echo "1200" ;;
	stencil) echo "1024 350" ;;
	sqlite) echo "200000" ;;
	*) return 1 ;;
	esac
}

# The breakdown's inputs (bench/run.sh, PROMPT's Table 8 for the dependence module: five builds
# and settings, each a column as slow as the dependence column): a quarter of bench_args's work,
# about 0.08 s natively (SQLite 0.25 s), so that the five columns cost what one column costs at
# bench_args.
breakdown_args() {
	case $1 in
	aos) echo "100000 250" ;;
	bintree) echo "18 4" ;;
	graph) echo "100000 6" ;;
	hashtable) echo "2000000" ;;
	histogram) echo "1000000 125" ;;
	linkedlist) echo "50000" ;;
	matmul) echo "760" ;;
	stencil) echo "1024 90" ;;
	sqlite) echo "50000" ;;
	*) return 1 ;;
	esac
}
