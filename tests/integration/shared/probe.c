/* zlib's configure probe: a one-function library linked with the full version script. */
extern int getchar(void);
int hello(void)
{
	return getchar();
}
