// SPDX-License-Identifier: MIT
/*
 * smd.conf fuzzer (issue 12): files made from the golden configurations
 * (tests/config/, the corpus) by mutating lines, keys and values,
 * and by raw bytes (NULs, CRs, bytes beyond ASCII, lines past the limit).
 * config_load must never crash or accept garbage silently: it either
 * refuses with "FILE:..." in its message, or what it accepted prints back
 * (config_print) to a file that loads again to the very same text, as
 * smd -nv promises.
 *
 *   fuzz_config [-n ITERATIONS] [-s SEED] SEED-FILES...
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "smd/config.h"
#include "tests/unit/unit.h"

static uint64_t rng;

static uint64_t rnd(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * UINT64_C(0x2545f4914f6cdd1d);
}

static unsigned int below(unsigned int n)
{
	return n ? (unsigned int)(rnd() % n) : 0;
}

#define MAX_KEYS 64
static char keys[MAX_KEYS][40];
static unsigned int nkeys;

static const char *const values[] = {
	"0", "1", "-1", "15", "16", "255", "256", "65535", "4294967295", "4294967296",
	"18446744073709551615", "18446744073709551616", "0x", "0x10", "0xffffffffffffffff",
	"0x1_0", "yes", "no", "true", "auto", "\"\"", "\"", "\"\"\"", "none", "dfree,updn,minhop",
	"bogus", "dfree,,updn", "fe80::/64", "fe80::/48", "::1", "0:255,1:0", "15:1", "0:256",
	"all", "smp,sa,trap,other", "report", "disable", "root", "users", "no-such-group",
	"mlx5_0:1", "mlx5_0:0", "0x0002c90300a1b2c3", "/tmp/x", "debug", "DEBUG", " ", "=",
	"#", "\\", "%s%s%n", "\xc3\x28", "\xff\xfe",
};

static void rand_token(char *out, size_t len)
{
	size_t n = below((unsigned int)(len - 1));

	for (size_t i = 0; i < n; i++)
		out[i] = (char)(1 + below(255));
	out[n] = 0;
}

/* One line of a mutated file, into buf */
static void mutate_line(const char *line, char *buf, size_t len)
{
	char tok[64];

	switch (below(8)) {
	case 0:	/* a known key, a hostile value */
		snprintf(buf, len, "%s = %s\n", keys[below(nkeys)],
			 values[below(sizeof(values) / sizeof(values[0]))]);
		break;
	case 1:	/* a known key, random bytes */
		rand_token(tok, sizeof(tok));
		snprintf(buf, len, "%s=%s\n", keys[below(nkeys)], tok);
		break;
	case 2:	/* random bytes */
		rand_token(tok, sizeof(tok));
		snprintf(buf, len, "%s\n", tok);
		break;
	case 3: {	/* a line near or past the length limit */
		size_t n = 1000 + below(60);

		if (n > len - 2)
			n = len - 2;
		memset(buf, 'a', n);
		memcpy(buf, keys[below(nkeys)], strlen(keys[0]) < n ? strlen(keys[0]) : 1);
		buf[n] = '\n';
		buf[n + 1] = 0;
		break;
	}
	case 4: {	/* the seed line with a byte flipped */
		size_t n = strlen(line);

		snprintf(buf, len, "%s", line);
		if (n)
			buf[below((unsigned int)n)] ^= (char)(1u << below(8));
		break;
	}
	case 5:	/* spacing, quotes and comments around a value */
		snprintf(buf, len, "  %s\t=\t\"%s\"  # %s\n", keys[below(nkeys)],
			 values[below(sizeof(values) / sizeof(values[0]))], "c");
		break;
	default:
		snprintf(buf, len, "%s", line);
		break;
	}
}

int main(int argc, char **argv)
{
	unsigned long iters = 3000, seed = 5, accepted = 0, refused = 0, findings = 0;
	char dir[] = "/tmp/fuzz_config.XXXXXX", path[64], again[64], line[2048];
	char **seeds;
	unsigned int *good, ngood = 0;
	int nseeds = 0, c;

	while ((c = getopt(argc, argv, "n:s:")) != -1) {
		switch (c) {
		case 'n': iters = strtoul(optarg, NULL, 0); break;
		case 's': seed = strtoul(optarg, NULL, 0); break;
		default:
			fprintf(stderr, "usage: fuzz_config [-n N] [-s SEED] SEED-FILES...\n");
			return 2;
		}
	}
	if (optind >= argc || !mkdtemp(dir))
		return 2;
	umask(077);
	seeds = calloc((size_t)(argc - optind), sizeof(*seeds));
	for (int i = optind; i < argc; i++) {
		size_t n;

		seeds[nseeds] = unit_read_file(argv[i], &n);
		if (seeds[nseeds])
			nseeds++;
	}
	/* The keys, as smd -nv prints them */
	{
		struct smd_config d;
		char *buf = NULL;
		size_t blen = 0;
		FILE *mf = open_memstream(&buf, &blen);

		config_defaults(&d);
		config_print(&d, mf);
		fclose(mf);
		for (char *l = strtok(buf, "\n"); l && nkeys < MAX_KEYS; l = strtok(NULL, "\n"))
			if (sscanf(l, "%39[a-z_0-9] =", keys[nkeys]) == 1)
				nkeys++;
		free(buf);
	}
	snprintf(path, sizeof(path), "%s/smd.conf", dir);
	snprintf(again, sizeof(again), "%s/again.conf", dir);
	good = calloc((size_t)nseeds + 1, sizeof(*good));
	for (int i = 0; i < nseeds; i++) {
		struct smd_config t;
		char err[512];
		FILE *f = fopen(path, "wb");

		fputs(seeds[i], f);
		fclose(f);
		config_defaults(&t);
		if (config_load(&t, path, err, sizeof(err)) == 0)
			good[ngood++] = (unsigned int)i;
	}
	rng = seed * UINT64_C(0x9e3779b97f4a7c15) | 1;
	for (unsigned long it = 0; it < iters; it++) {
		/* Two times in three from a file that loads as it is: more get through */
		const char *src = ngood && below(3) ? seeds[good[below(ngood)]] :
				  seeds[below((unsigned int)nseeds)];
		struct smd_config a, b;
		char err[512] = "", *p1 = NULL, *p2 = NULL;
		size_t l1 = 0, l2 = 0;
		FILE *f = fopen(path, "wb");
		const char *s = src;
		int r;

		unsigned int lines = 0, k = 0, m1, m2, junk;

		for (const char *q = src; *q; q++)
			lines += *q == '\n';
		/* One or two of the seed's lines mutated, sometimes a stray NUL or CR */
		m1 = below(lines + 1);
		m2 = below(2) ? below(lines + 1) : UINT32_MAX;
		junk = below(5) ? UINT32_MAX : below(lines + 1);
		while (*s) {
			const char *e = strchr(s, '\n');
			size_t n = e ? (size_t)(e - s + 1) : strlen(s);
			char orig[1200];

			snprintf(orig, sizeof(orig), "%.*s",
				 (int)(n < sizeof(orig) ? n : sizeof(orig) - 1), s);
			s += n;
			if (k == m1 || k == m2) {
				mutate_line(orig, line, sizeof(line));
				fputs(line, f);
			} else {
				fputs(orig, f);
			}
			if (k == junk)
				fputc(below(2) ? '\0' : '\r', f);
			k++;
		}
		fclose(f);
		config_defaults(&a);
		r = config_load(&a, path, err, sizeof(err));
		if (r < 0) {
			refused++;
			if (strncmp(err, path, strlen(path))) {
				findings++;
				fprintf(stderr, "  FINDING %lu: refusal without the file name: "
					"%s\n", it, err);
			}
			continue;
		}
		accepted++;
		/* Accepted: it prints back, and what it prints loads to the same */
		f = fopen(again, "wb");
		config_print(&a, f);
		fclose(f);
		config_defaults(&b);
		r = config_load(&b, again, err, sizeof(err));
		f = open_memstream(&p1, &l1);
		config_print(&a, f);
		fclose(f);
		f = open_memstream(&p2, &l2);
		config_print(&b, f);
		fclose(f);
		if (r < 0 || l1 != l2 || memcmp(p1, p2, l1)) {
			findings++;
			fprintf(stderr, "  FINDING %lu: printed form %s: %s\n", it,
				r < 0 ? "refused" : "differs", r < 0 ? err : "");
		}
		free(p1);
		free(p2);
	}
	unlink(path);
	unlink(again);
	rmdir(dir);
	for (int i = 0; i < nseeds; i++)
		free(seeds[i]);
	free(seeds);
	free(good);
	printf("fuzz_config: seed %lu, %lu files, %lu accepted, %lu refused; %lu findings\n", seed,
	       iters, accepted, refused, findings);
	CHECK_EQ(findings, 0);
	CHECK(nkeys > 20);
	return unit_report();
}
