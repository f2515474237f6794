// SPDX-License-Identifier: MIT
/*
 * The configuration's key table (issue 15): config_print prints every key
 * once, in the table's order; SIGHUP (config_reload) takes the new value of
 * each key the table marks live and keeps the running value of each other.
 * Every key is changed to a value of its own for that, so a key added to
 * the table without a value here fails the test.
 *
 *   test_config          run the checks
 *   test_config --keys   print "KEY live|restart" per key (tests/man/t_man.sh)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "smd/config.h"
#include "tests/unit/unit.h"

/* Values to try on each key, until one parses and prints differently */
static const char *const tries[] = {
	"9", "1", "yes", "no", "0x10", "fe80:1::/64", "/tmp/smd-test-config", "mlx5_0:2",
	"updn", "0:1", "0,1,2,3,4,5,6,7,0,1,2,3,4,5,6,7", "debug", "sa", "4096", "40",
	"disable", "isolate", "0",
};

/* The value line of key in a printed configuration, or NULL */
static const char *line_of(const char *text, const char *key, char *out, size_t len)
{
	size_t kl = strlen(key);

	for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
		if (!strncmp(p, key, kl) && !strncmp(p + kl, " = ", 3)) {
			const char *e = strchr(p, '\n');
			size_t n = e ? (size_t)(e - p) : strlen(p);

			snprintf(out, len, "%.*s", (int)(n < len ? n : len - 1), p);
			return out;
		}
	}
	return NULL;
}

static char *printed(const struct smd_config *c)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	config_print(c, f);
	fclose(f);
	return buf;
}

int main(int argc, char **argv)
{
	struct smd_config run, next, old;
	char err[256], a[512], b[512];
	const char *name;
	bool live;
	size_t n = 0;

	if (argc > 1 && !strcmp(argv[1], "--keys")) {
		for (size_t i = 0; (name = config_key_name(i, &live)); i++)
			printf("%s %s\n", name, live ? "live" : "restart");
		return 0;
	}

	config_defaults(&run);
	config_defaults(&next);
	char *base = printed(&run);

	/* config_print: every key once, in the table's order */
	const char *p = base;

	for (size_t i = 0; (name = config_key_name(i, NULL)); i++, n++) {
		char want[64];

		snprintf(want, sizeof(want), "%s = ", name);
		CHECK_MSG(!strncmp(p, want, strlen(want)), "line %zu of -nv is %s", i, name);
		p = strchr(p, '\n');
		if (!p)
			break;
		p++;
	}
	CHECK_MSG(p && !*p, "config_print prints the %zu keys and nothing else", n);

	/* Every key changed to a value of its own */
	for (size_t i = 0; (name = config_key_name(i, NULL)); i++) {
		bool changed = false;

		for (size_t t = 0; t < sizeof(tries) / sizeof(tries[0]) && !changed; t++) {
			struct smd_config c = next;
			char *txt;

			if (config_set(&c, name, tries[t], err, sizeof(err)) < 0)
				continue;
			txt = printed(&c);
			changed = strcmp(line_of(txt, name, a, sizeof(a)),
					 line_of(base, name, b, sizeof(b))) != 0;
			if (changed)
				next = c;
			free(txt);
		}
		CHECK_MSG(changed, "%s takes a value other than its default", name);
	}

	/* SIGHUP: live keys take the new value, the others keep theirs */
	old = run;
	config_reload(&run, &next);
	char *after = printed(&run), *want_new = printed(&next), *want_old = printed(&old);

	for (size_t i = 0; (name = config_key_name(i, &live)); i++) {
		const char *got = line_of(after, name, a, sizeof(a));
		const char *want = line_of(live ? want_new : want_old, name, b, sizeof(b));

		CHECK_MSG(got && want && !strcmp(got, want), "after SIGHUP %s is %s (%s key)",
		      name, want ? want : "?", live ? "a live" : "a restart");
	}
	/* The keys the issue names: SMP window and port stay; the IPoIB group
	 * follows, with the partitions file (issue 13) */
	CHECK_MSG(!config_key_name(0, &live) || !live, "port needs a restart");
	CHECK_MSG(run.max_outstanding_smps == old.max_outstanding_smps, "the SMP window stays");
	CHECK_MSG(run.ipoib_mtu == next.ipoib_mtu, "the IPoIB group's MTU follows");
	CHECK_MSG(!strcmp(run.partition_config, next.partition_config),
		  "partition_config follows");
	CHECK_MSG(run.sm_priority == next.sm_priority, "sm_priority applies at once");
	CHECK_MSG(run.sl2vl.set == next.sl2vl.set, "sl2vl applies at once");

	/* A bad value leaves the field as it was */
	struct smd_config c = run;

	CHECK_MSG(config_set(&c, "lmc", "8", err, sizeof(err)) < 0 && c.lmc == run.lmc &&
	      strstr(err, "out of range"), "lmc 8: %s", err);
	CHECK_MSG(config_set(&c, "ipoib_rate", "11", err, sizeof(err)) < 0 &&
	      c.ipoib_rate == run.ipoib_rate && strstr(err, "Gb/s: 2.5,"), "ipoib_rate 11: %s", err);
	CHECK_MSG(config_set(&c, "nope", "1", err, sizeof(err)) == -ENOKEY, "unknown key: %s", err);

	free(base);
	free(after);
	free(want_new);
	free(want_old);
	return unit_report();
}
