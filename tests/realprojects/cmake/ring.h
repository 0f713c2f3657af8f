#ifndef RING_H
#define RING_H
#ifdef __cplusplus
extern "C" {
#endif
struct ring;
struct ring *ring_new(unsigned cap);
void ring_push(struct ring *r, int v);
long ring_sum(const struct ring *r);
void ring_free(struct ring *r);
#ifdef __cplusplus
}
#endif
#endif
