/*
 * The arithmetic of StructSlim (Roy and Liu, CGO 2016, section 4) on the streams of one data
 * object, apart from any event handling so that a unit test can drive it with made-up streams:
 *
 *   stride of a stream   gcd of the differences between its successive addresses   (Eq. 2, 3)
 *   structure size       gcd of the strides of the object's streams                (Eq. 5)
 *                        (but for strides of 1, irregular or byte walks: 4.2.2)
 *                        (the declared size instead when it divides that: folded)
 *   field of a stream    (its address - the object's base) mod size                (Eq. 6)
 *   affinity A(i, j)     cost of i and j in the loops touching both / cost of i and j  (Eq. 7)
 *   clusters             complete linkage: every two fields of a cluster have A >= threshold
 *
 * A rare field, one with less than SA_RARE_SHARE of the object's cost, joins no cluster and is
 * left out of the advice: splitting it off or not changes nothing, and whether an access sample
 * meets it at all is chance (a field used once per run next to a million accesses would make the
 * full and the sampled mode advise differently).
 *
 * Differences are taken only between two accesses to the same instance of the data object (the
 * same allocation), never across instances: the distance between two separately allocated nodes
 * says nothing about their type.  A data object whose streams never touched one instance twice at
 * two addresses has no stride, and its size is unknown (0).
 */
#ifndef SA_AFFINITY_H
#define SA_AFFINITY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SA_FIELDS_MAX 64           /* fields of one layout; the rest are counted, not analysed */
#define SA_NAME_MAX 64             /* a field's or a type's name, NUL included; longer ones cut */
#define SA_RARE_SHARE 0.01         /* a field with less of the object's cost is rare */
#define SA_NO_CLUSTER UINT32_MAX

/* One stream: the accesses of one instruction to one data object in one loop. */
struct sa_stream {
	uint32_t loop;                 /* innermost loop site, 0: outside every loop */
	uint32_t site;                 /* the load or store */
	uint64_t stride;               /* gcd of its in-instance address differences; 0: none */
	uint64_t offset;               /* its first access's offset from its instance's base */
	uint32_t bytes;                /* its widest access */
	uint64_t accesses, cost;
};

/*
 * Where the size the fields are computed with comes from.  Strides are multiples of the size
 * (StructSlim 4.2.2: a loop whose index steps k elements strides k sizes), so an inferred size
 * that is a multiple of the declared one, larger than it, is k elements of the declared structure:
 * a loop unrolled k times, or one over every k-th element, in every stream of the object.  The
 * declared size is then used and the offsets are folded modulo it, so that each member is one
 * field, once.  An inferred size that is no multiple of the declared one (smaller, as from an
 * instruction walking inside an element, or memory not used as its declared type) is what the
 * accesses show and is used as it is.
 */
enum sa_size_source {
	SA_SIZE_STRIDES,               /* inferred from the strides (Eq. 5) */
	SA_SIZE_FOLDED,                /* inferred a multiple of declared: declared, folded */
	SA_SIZE_DECLARED,              /* no stride: the type size the site table gives */
	SA_SIZE_OBJECT,                /* neither: offsets from each instance's base, unreduced */
};

struct sa_field {
	uint64_t offset;               /* from the start of the structure */
	uint32_t bytes;                /* widest access to it */
	uint64_t accesses, cost;
	char name[SA_NAME_MAX];        /* the member at offset (sa_layout_name()), or "" */
};

/* The inferred layout of one data object, and the affinities of its fields. */
struct sa_layout {
	uint64_t inferred;             /* Eq. 5; 0: unknown */
	uint64_t declared;             /* given by the caller; 0: unknown */
	uint64_t used;                 /* the modulus of Eq. 6; 0 with SA_SIZE_OBJECT */
	enum sa_size_source source;
	uint32_t nfields;
	uint32_t dropped_streams;      /* streams whose offset is not among the SA_FIELDS_MAX
					 * smallest: left out of fields and affinities */
	struct sa_field field[SA_FIELDS_MAX];        /* by increasing offset */
	double affinity[SA_FIELDS_MAX][SA_FIELDS_MAX];
	uint32_t cluster[SA_FIELDS_MAX];             /* per field; clusters numbered 0.. in order
						      * of their first (smallest) offset;
						      * SA_NO_CLUSTER for a rare field */
	uint32_t nclusters;
	uint32_t nrare;                              /* rare fields */
	char type[SA_NAME_MAX];        /* the declared structure's name (sa_layout_name()); "" */
	uint32_t nmembers;             /* member offsets a stride-1 stream's field snaps to: */
	uint64_t member[SA_FIELDS_MAX];              /* ascending; kept only when `used` is the
						      * declared layout's size */
};

uint64_t sa_gcd(uint64_t a, uint64_t b);

/*
 * Eq. 2 and 3, one difference at a time: folds the distance between offsets a and b (of the same
 * instance) into *stride.  Equal offsets change nothing.
 */
static inline void sa_stride_add(uint64_t *stride, uint64_t a, uint64_t b)
{
	uint64_t d = a > b ? a - b : b - a, low = d & -d;

	if (!d || d == *stride)
		return;
	/* A power-of-two stride, the usual one, keeps the lower of itself and d's lowest set bit:
	 * that is the gcd, without calling sa_gcd() once per access. */
	if (*stride && !(*stride & (*stride - 1)))
		*stride = low < *stride ? low : *stride;
	else
		*stride = sa_gcd(*stride, d);
}

/*
 * Computes l's size, fields, affinities and clusters from the n streams s[] of one data object
 * (any order), with declared (0: unknown) the type size the site table gives (used instead of the
 * inferred size when that is a multiple of it: SA_SIZE_FOLDED), fields (NULL or "": unknown) the
 * site table's layout of that type (sa_layout_name()), and threshold the affinity from which two
 * fields belong together.  Never fails: a layout with more than SA_FIELDS_MAX fields keeps the
 * smallest offsets and counts the other streams in dropped_streams; without memory for the
 * affinities, every field is its own cluster.
 */
void sa_layout_build(struct sa_layout *l, const struct sa_stream *s, size_t n, uint64_t declared,
		     const char *fields, double threshold);

/* The field index of offset off in l (offset already reduced modulo l->used), or -1. */
int sa_layout_field(const struct sa_layout *l, uint64_t off);

/*
 * Whether l's inferred size is consistent with its declared one: equal to it, or a multiple of it
 * (SA_SIZE_FOLDED).  Meaningful only when both are known.
 */
static inline bool sa_layout_agree(const struct sa_layout *l)
{
	return l->inferred && l->declared && l->inferred % l->declared == 0;
}

/*
 * The offset a stream's accesses fall at within the structure of l (Eq. 6).  A stream of stride 1
 * walks inside a member (a name read char by char) or has no pattern (StructSlim 4.2.2), and
 * where it first fell says little: with the declared layout known, its field is the member it
 * fell in.  Otherwise a rotated loop's peeled first access (name) and its loop (name+1) would be
 * two fields, advised apart.
 */
uint64_t sa_layout_offset(const struct sa_layout *l, const struct sa_stream *s);

/*
 * Names l's fields (after sa_layout_build()) from fields, a structure's layout as the site table
 * gives it: "Name/size:member@offset,..." (pass/README.md; split at the last ':', then at the last
 * '/').  A field at a member's offset takes the member's name (the first of several, as bitfields
 * sharing their storage); a field inside a member (a nested structure, an array) "member+delta";
 * an offset beyond the structure's size is taken modulo the size (an array of structures).  Sets
 * l->type.  Returns false, naming nothing, for "" and for a string that does not parse.
 */
bool sa_layout_name(struct sa_layout *l, const char *fields);

/* The structure size a site table `fields` string gives ("S/16:a@0,..." gives 16), or 0. */
uint64_t sa_fields_size(const char *fields);

/*
 * Writes the advice for l in words into buf (len bytes, cut if too short): "split into {0, 8}
 * and {4, 12}" (with names where sa_layout_name() gave them: "split into {a, c} and {b, d}"),
 * "do not split: all fields are used together", "do not split: one field is accessed",
 * "no fields: no access was attributed".
 */
void sa_layout_advice(const struct sa_layout *l, char *buf, size_t len);

#endif /* SA_AFFINITY_H */
