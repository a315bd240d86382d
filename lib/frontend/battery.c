// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Batteries, AC and the learned discharge rates (battery.h). Which supplies
 * count follows systemd's battery-util.c: a battery is type Battery, present
 * and not of scope Device; the machine is on AC when any other supply is
 * online, or when no battery discharges. The charge is read as finely as the
 * driver gives it (energy_now/energy_full, else charge_now/charge_full, else
 * the whole percent of capacity), since the rate of a laptop asleep is a few
 * percent an hour.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "frontend/battery.h"
#include "util/error.h"
#include "util/util.h"

#define MAX_SUPPLIES 64
#define MIN_MEASURE_USEC (10ULL * 60 * 1000000)

/* Attribute @attr of supply @name under @dir, stripped; -errno. */
static int attr_read(const char *dir, const char *name, const char *attr, char *buf, size_t len)
{
	char path[4096];
	int r;

	snprintf(path, sizeof(path), "%s/%s/%s", dir, name, attr);
	r = hib_read_text(path, buf, len);
	if (r < 0)
		return r;
	memmove(buf, hib_strip(buf), strlen(hib_strip(buf)) + 1);
	return 0;
}

/* A non-negative integer attribute; -1 when missing or not one. */
static long long attr_num(const char *dir, const char *name, const char *attr)
{
	char buf[64], *end;
	long long v;

	if (attr_read(dir, name, attr, buf, sizeof(buf)) < 0 || !buf[0])
		return -1;
	errno = 0;
	v = strtoll(buf, &end, 10);
	return errno || *end || v < 0 ? -1 : v;
}

static bool attr_is(const char *dir, const char *name, const char *attr, const char *want)
{
	char buf[64];

	return attr_read(dir, name, attr, buf, sizeof(buf)) == 0 && strcmp(buf, want) == 0;
}

static uint64_t fnv1a(uint64_t h, const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s;; p++) {
		h = (h ^ *p) * 0x100000001b3ULL;
		if (!*p)
			return h;
	}
}

/* The battery's identity as systemd keys its rate: what it says it is. */
static uint64_t battery_id(const char *dir, const char *name)
{
	static const char *const attrs[] = { "manufacturer", "model_name", "serial_number" };
	uint64_t h = 0xcbf29ce484222325ULL;
	bool any = false;

	for (size_t i = 0; i < ARRAY_SIZE(attrs); i++) {
		char buf[128] = "";

		attr_read(dir, name, attrs[i], buf, sizeof(buf));
		any |= buf[0] != 0;
		h = fnv1a(h, buf);
	}
	return any ? h : fnv1a(h, name); /* nothing said: its slot is all we have */
}

/* now/full in per mille for the pair @now/@full ("energy" or "charge"); the
 * alarm in the same unit; -1 when the driver has not that pair. */
static int charge_permille(const char *dir, const char *name, const char *unit, int *alarm)
{
	char a[32], b[32];
	long long now, full, al;

	snprintf(a, sizeof(a), "%s_now", unit);
	snprintf(b, sizeof(b), "%s_full", unit);
	now = attr_num(dir, name, a);
	full = attr_num(dir, name, b);
	if (now < 0 || full <= 0)
		return -1;
	al = attr_num(dir, name, "alarm");
	*alarm = al > 0 && al < full ? (int)(al * 1000 / full) + (al * 1000 % full != 0) : 0;
	return now >= full ? 1000 : (int)(now * 1000 / full);
}

/* Fills @b from supply @name; false when its charge cannot be read. */
static bool battery_read(const char *dir, const char *name, struct hib_battery *b)
{
	char status[32] = "";
	long long cap;

	*b = (struct hib_battery){ .permille = -1 };
	snprintf(b->name, sizeof(b->name), "%s", name);
	b->permille = charge_permille(dir, name, "energy", &b->alarm_permille);
	if (b->permille < 0)
		b->permille = charge_permille(dir, name, "charge", &b->alarm_permille);
	if (b->permille < 0) {
		cap = attr_num(dir, name, "capacity");
		if (cap < 0 || cap > 100)
			return false;
		b->permille = (int)cap * 10;
		b->coarse = true;
	}
	b->id = battery_id(dir, name);
	if (attr_read(dir, name, "status", status, sizeof(status)) < 0)
		b->discharging = true; /* systemd assumes it is */
	else
		b->discharging = strcmp(status, "Discharging") == 0;
	b->charging = strcmp(status, "Charging") == 0 || strcmp(status, "Full") == 0;
	return true;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* One supply into @p. */
static void supply_read(const char *dir, const char *name, struct hib_power *p, bool *ac_online,
			bool *discharging)
{
	char type[32];

	if (attr_read(dir, name, "type", type, sizeof(type)) < 0)
		return;
	if (strcmp(type, "Battery") != 0) {
		/* Mains, USB, UPS...: online (1, 2: kinds of online) is AC. */
		if (attr_num(dir, name, "online") > 0)
			*ac_online = true;
		return;
	}
	if (attr_is(dir, name, "scope", "Device") || attr_is(dir, name, "present", "0") ||
	    p->n == HIB_BATTERY_MAX || !battery_read(dir, name, &p->bat[p->n])) {
		p->ignored++;
		return;
	}
	*discharging |= p->bat[p->n].discharging;
	p->n++;
}

int hib_power_read(const char *dir, struct hib_power *ret, struct hib_error *err)
{
	char *names[MAX_SUPPLIES];
	bool ac_online = false, discharging = false;
	struct dirent *e;
	size_t n = 0;
	DIR *d;

	hib_error_clear(err);
	*ret = (struct hib_power){ .on_ac = true };
	d = opendir(dir);
	if (!d) {
		if (errno == ENOENT)
			return 0;
		return hib_error_set(err, -errno, "%s: %s", dir, strerror(errno));
	}
	while ((e = readdir(d)) && n < MAX_SUPPLIES)
		if (e->d_name[0] != '.' && (names[n] = strdup(e->d_name)))
			n++;
	closedir(d);
	qsort(names, n, sizeof(*names), cmp_str);
	for (size_t i = 0; i < n; i++) {
		supply_read(dir, names[i], ret, &ac_online, &discharging);
		free(names[i]);
	}
	ret->on_ac = ac_online || !discharging;
	return 0;
}

bool hib_power_alarm_usable(const struct hib_power *p)
{
	for (unsigned i = 0; i < p->n; i++)
		if (p->bat[i].alarm_permille <= 0)
			return false;
	return p->n > 0;
}

unsigned hib_rate_get(const struct hib_rate_store *rs, uint64_t id)
{
	for (unsigned i = 0; i < rs->n; i++)
		if (rs->e[i].id == id)
			return rs->e[i].rate;
	return 0;
}

void hib_rate_put(struct hib_rate_store *rs, uint64_t id, unsigned rate)
{
	unsigned i;

	for (i = 0; i < rs->n && rs->e[i].id != id; i++)
		;
	if (i == rs->n && rs->n < HIB_RATE_STORE_MAX)
		rs->n++;
	if (i == HIB_RATE_STORE_MAX)
		i--; /* full: the oldest makes room */
	memmove(&rs->e[1], &rs->e[0], i * sizeof(rs->e[0]));
	rs->e[0] = (struct hib_rate_entry){ .id = id, .rate = rate };
}

int hib_rate_load(const char *path, struct hib_rate_store *ret, struct hib_error *err)
{
	char line[128];
	FILE *f;

	hib_error_clear(err);
	*ret = (struct hib_rate_store){ 0 };
	f = fopen(path, "re");
	if (!f) {
		if (errno == ENOENT)
			return 0;
		return hib_error_set(err, -errno, "%s: %s", path, strerror(errno));
	}
	while (ret->n < HIB_RATE_STORE_MAX && fgets(line, sizeof(line), f)) {
		unsigned long long id;
		unsigned rate;
		char extra;

		if (sscanf(line, "%llx %u %c", &id, &rate, &extra) != 2 || rate == 0 ||
		    rate > HIB_BATTERY_RATE_MAX || hib_rate_get(ret, id))
			continue;
		ret->e[ret->n++] = (struct hib_rate_entry){ .id = id, .rate = rate };
	}
	fclose(f);
	return 0;
}

static int save_tmp(const char *tmp, const struct hib_rate_store *rs)
{
	FILE *f = fopen(tmp, "we");
	int r = 0;

	if (!f)
		return -errno;
	fprintf(f, "# hibernate(8): discharge rate per battery, per mille per hour\n");
	for (unsigned i = 0; i < rs->n; i++)
		fprintf(f, "%016llx %u\n", (unsigned long long)rs->e[i].id, rs->e[i].rate);
	if (fflush(f) != 0 || fsync(fileno(f)) < 0)
		r = -errno;
	if (fclose(f) != 0 && r == 0)
		r = -errno;
	return r;
}

int hib_rate_save(const char *path, const struct hib_rate_store *rs, struct hib_error *err)
{
	char tmp[4096], dir[4096], *slash;
	int r;

	hib_error_clear(err);
	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = 0;
		if (mkdir(dir, 0755) < 0 && errno != EEXIST)
			return hib_error_set(err, -errno, "%s: %s (cannot keep the battery rate)",
					     dir, strerror(errno));
	}
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	r = save_tmp(tmp, rs);
	if (r == 0 && rename(tmp, path) < 0)
		r = -errno;
	if (r < 0) {
		unlink(tmp);
		return hib_error_set(err, r, "%s: %s (the battery rate is not kept)", path,
				     strerror(-r));
	}
	return 0;
}

unsigned hib_rate_measure(const struct hib_battery *before, const struct hib_battery *after,
			  uint64_t elapsed_usec, unsigned old)
{
	int drop = before->permille - after->permille;
	int least = before->coarse || after->coarse ? HIB_BATTERY_MEASURE_DROP_COARSE
						    : HIB_BATTERY_MEASURE_DROP;
	uint64_t rate;

	/* A short interval measures too when the drop is clear: a small one
	 * would be the gauge's rounding over a short time, a wild rate. */
	if (before->charging || after->charging || drop <= 0 || elapsed_usec == 0 ||
	    (elapsed_usec < MIN_MEASURE_USEC && drop < least))
		return 0;
	rate = (uint64_t)drop * 3600000000ULL / elapsed_usec;
	if (rate == 0)
		rate = 1;
	if (rate > HIB_BATTERY_RATE_MAX)
		return 0;
	/* Half the new, half the old: one interval with a busy wake or a
	 * recalibrating gauge moves the estimate, never throws it. */
	return old ? (unsigned)((rate + old + 1) / 2) : (unsigned)rate;
}

unsigned hib_rate_learn(struct hib_rate_store *rs, const struct hib_power *before,
			const struct hib_power *after, uint64_t elapsed_usec)
{
	unsigned learned = 0;

	for (unsigned i = 0; i < after->n; i++)
		for (unsigned k = 0; k < before->n; k++) {
			const struct hib_battery *a = &after->bat[i], *b = &before->bat[k];
			unsigned rate;

			if (a->id != b->id || strcmp(a->name, b->name) != 0)
				continue;
			rate = hib_rate_measure(b, a, elapsed_usec, hib_rate_get(rs, a->id));
			if (rate) {
				hib_rate_put(rs, a->id, rate);
				learned++;
			}
		}
	return learned;
}
