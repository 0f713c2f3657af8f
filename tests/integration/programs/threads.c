/* Threads: their events are counted and dropped, the profile says so, and nothing crashes. */
#include <pthread.h>
#include <stdio.h>

volatile long shared[4];

static void *work(void *arg)
{
	long id = (long)arg;
	for (int i = 0; i < 100000; i++)
		shared[id] += i;
	return NULL;
}

int main(void)
{
	pthread_t t[3];

	for (long i = 0; i < 3; i++)
		pthread_create(&t[i], NULL, work, (void *)(i + 1));
	work(0);
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	printf("%ld %ld %ld %ld\n", shared[0], shared[1], shared[2], shared[3]);
	return 0;
}
