/*
 * A parallel compressor for the bench and tests/threads (issue 22): Zstandard's library
 * (bench/zstd/fetch.sh, never committed) driven through its public API, with its compression
 * thread pool (ZSTD_c_nbWorkers) doing the work.
 *
 *   driver g BYTES OUT          writes BYTES of deterministic text-like input (words of a fixed
 *                               vocabulary, some far more frequent than others, in lines)
 *   driver c THREADS IN OUT     compresses IN into OUT, level 3: THREADS 1 on the calling
 *                               thread alone (nbWorkers 0, the single-threaded version), more
 *                               with that many compression threads (jobs of 512 KiB, so that a
 *                               file of a few MiB gives each thread several)
 *   driver d IN OUT             decompresses IN into OUT
 *
 * Each mode prints one line: the sizes and the FNV-1a hash of what it wrote, which is what the
 * bench compares with the native build's output (OUT may be /dev/null there).
 */
#define ZSTD_STATIC_LINKING_ONLY   /* ZSTD_c_jobSize */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#define LEVEL    3
#define JOB_SIZE (512 * 1024)
#define VOCAB    512

struct buf {
	unsigned char *p;
	size_t n;
};

static void die(const char *what, const char *why)
{
	fprintf(stderr, "driver: %s: %s\n", what, why);
	exit(1);
}

static uint64_t fnv1a(const struct buf *b)
{
	uint64_t h = 0xcbf29ce484222325u;

	for (size_t i = 0; i < b->n; i++)
		h = (h ^ b->p[i]) * 0x100000001b3u;
	return h;
}

static struct buf slurp(const char *path)
{
	struct buf b = { NULL, 0 };
	size_t cap = 0, got;
	FILE *f = fopen(path, "rb");

	if (!f)
		die(path, "cannot open");
	do {
		if (b.n == cap) {
			cap = cap ? 2 * cap : 1 << 20;
			b.p = realloc(b.p, cap);
			if (!b.p)
				die(path, "out of memory");
		}
		got = fread(b.p + b.n, 1, cap - b.n, f);
		b.n += got;
	} while (got > 0);
	fclose(f);
	return b;
}

static void spill(const char *path, const struct buf *b)
{
	FILE *f = fopen(path, "wb");

	if (!f || fwrite(b->p, 1, b->n, f) != b->n || fclose(f) != 0)
		die(path, "cannot write");
}

/* A 64-bit LCG: the same input on every machine. */
static uint64_t next(uint64_t *s)
{
	*s = *s * 6364136223846793005u + 1442695040888963407u;
	return *s >> 33;
}

/* Text-like input: VOCAB made-up words; a word's rank is the smaller of two uniform draws, so
 * that low ranks are frequent, as in text; lines of about ten words. */
static struct buf generate(size_t bytes)
{
	static char words[VOCAB][12];
	struct buf b = { malloc(bytes + 16), 0 };
	uint64_t s = 22;

	if (!b.p)
		die("generate", "out of memory");
	for (int w = 0; w < VOCAB; w++) {
		int len = 2 + (int)(next(&s) % 9);

		for (int i = 0; i < len; i++)
			words[w][i] = (char)('a' + next(&s) % 26);
		words[w][len] = '\0';
	}
	while (b.n < bytes) {
		uint64_t r1 = next(&s) % VOCAB, r2 = next(&s) % VOCAB;
		const char *w = words[r1 < r2 ? r1 : r2];
		size_t len = strlen(w);

		memcpy(b.p + b.n, w, len);
		b.n += len;
		b.p[b.n++] = next(&s) % 10 ? ' ' : '\n';
	}
	b.n = bytes;
	return b;
}

static void check(size_t r, const char *what)
{
	if (ZSTD_isError(r))
		die(what, ZSTD_getErrorName(r));
}

static struct buf compress(const struct buf *in, int threads)
{
	struct buf out = { malloc(ZSTD_compressBound(in->n)), 0 };
	ZSTD_CCtx *cc = ZSTD_createCCtx();

	if (!out.p || !cc)
		die("compress", "out of memory");
	check(ZSTD_CCtx_setParameter(cc, ZSTD_c_compressionLevel, LEVEL), "level");
	if (threads > 1) {
		check(ZSTD_CCtx_setParameter(cc, ZSTD_c_nbWorkers, threads), "nbWorkers (ZSTD_MULTITHREAD?)");
		check(ZSTD_CCtx_setParameter(cc, ZSTD_c_jobSize, JOB_SIZE), "jobSize");
	}
	out.n = ZSTD_compress2(cc, out.p, ZSTD_compressBound(in->n), in->p, in->n);
	check(out.n, "compress");
	ZSTD_freeCCtx(cc);
	return out;
}

/* Streaming, so that a frame without its content size decompresses too. */
static struct buf decompress(const struct buf *in)
{
	struct buf out = { NULL, 0 };
	size_t cap = 0, r;
	ZSTD_DCtx *dc = ZSTD_createDCtx();
	ZSTD_inBuffer src = { in->p, in->n, 0 };

	if (!dc)
		die("decompress", "out of memory");
	do {
		if (cap - out.n < ZSTD_DStreamOutSize()) {
			cap = 2 * cap + ZSTD_DStreamOutSize();
			out.p = realloc(out.p, cap);
			if (!out.p)
				die("decompress", "out of memory");
		}
		ZSTD_outBuffer dst = { out.p, cap, out.n };

		r = ZSTD_decompressStream(dc, &dst, &src);
		check(r, "decompress");
		out.n = dst.pos;
	} while (r != 0 || src.pos < src.size);
	ZSTD_freeDCtx(dc);
	return out;
}

int main(int argc, char **argv)
{
	struct buf in, out;
	const char *mode = argc > 1 ? argv[1] : "";

	if (!strcmp(mode, "g") && argc == 4) {
		out = generate(strtoull(argv[2], NULL, 10));
		in.n = 0;
	} else if (!strcmp(mode, "c") && argc == 5 && atoi(argv[2]) > 0) {
		in = slurp(argv[3]);
		out = compress(&in, atoi(argv[2]));
	} else if (!strcmp(mode, "d") && argc == 4) {
		in = slurp(argv[2]);
		out = decompress(&in);
	} else {
		fprintf(stderr, "usage: driver g BYTES OUT | c THREADS IN OUT | d IN OUT\n");
		return 2;
	}
	spill(argv[argc - 1], &out);
	printf("%s: %zu bytes in, %zu bytes out, fnv1a %016llx\n", mode, in.n, out.n,
	       (unsigned long long)fnv1a(&out));
	return 0;
}
