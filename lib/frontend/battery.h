/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The batteries and the AC supply as suspend-then-hibernate needs them
 * (battery.c): read from a power_supply class directory (/sys/class/
 * power_supply, or a tree a test made), the per-battery discharge rate kept
 * under /var/lib/hibernate, and the rate learned from two readings. The
 * batteries that count are systemd's: type Battery, present, scope not Device
 * (a mouse's or a keyboard's battery); a UPS has its own type and is not one.
 */
#ifndef HIB_BATTERY_H
#define HIB_BATTERY_H

#include <stdbool.h>
#include <stdint.h>

#include "hibernate.h"

#define HIB_POWER_SUPPLY_DIR "/sys/class/power_supply"
#define HIB_BATTERY_RATE_FILE "/var/lib/hibernate/battery-rate"
#define HIB_BATTERY_MAX 8
/* Rates are in per mille of a full battery per hour (0.1 %/h), capacities in
 * per mille: an s2idle laptop loses ~3 %/h, so whole percents would not do. */
#define HIB_BATTERY_RATE_MAX 2000 /* 200 %/h: anything faster is a bad reading */
#define HIB_RATE_STORE_MAX 16     /* batteries remembered, the most recent first */

struct hib_battery {
	char name[64];      /* the power_supply's directory name (BAT0) */
	uint64_t id;        /* manufacturer, model_name, serial_number hashed */
	int permille;       /* charge, 0..1000 (energy_now/energy_full, charge_*, capacity) */
	bool discharging;   /* status Discharging (or no status: systemd assumes so) */
	bool charging;      /* status Charging or Full: a reading that learns nothing */
	int alarm_permille; /* the ACPI alarm (_BTP) as a charge, 0: none */
	bool coarse;        /* from capacity alone: whole percents (10 per mille steps) */
};

struct hib_power {
	unsigned n; /* batteries that count, in name order */
	struct hib_battery bat[HIB_BATTERY_MAX];
	bool on_ac;       /* systemd's on_ac_power(): a supply online, or no battery discharging */
	unsigned ignored; /* device batteries, UPSes, absent batteries, unreadable ones */
};

/*
 * The supplies under @dir (a power_supply class directory). A missing
 * directory is no battery and on AC, as on a desktop. Unreadable or bogus
 * values make a battery ignored, never an error; -errno with @err only when
 * the directory cannot be listed.
 */
int hib_power_read(const char *dir, struct hib_power *ret, struct hib_error *err);

/* The firmware alarm is usable when every battery has one (systemd's test). */
bool hib_power_alarm_usable(const struct hib_power *p);

struct hib_rate_entry {
	uint64_t id;
	unsigned rate; /* per mille per hour, 1..HIB_BATTERY_RATE_MAX */
};

struct hib_rate_store {
	unsigned n;
	struct hib_rate_entry e[HIB_RATE_STORE_MAX];
};

/* The learned rate of battery @id, 0 when none. */
unsigned hib_rate_get(const struct hib_rate_store *rs, uint64_t id);

/* Sets @id's rate, moving it first; the oldest falls off a full store. */
void hib_rate_put(struct hib_rate_store *rs, uint64_t id, unsigned rate);

/* The store at @path ("<id hex> <rate>" lines); a missing file is an empty
 * store, bad lines are skipped (a file is only ever advice). -errno with
 * @err when it cannot be read. */
int hib_rate_load(const char *path, struct hib_rate_store *ret, struct hib_error *err);

/* Writes the store to @path by a temporary file and rename(2), creating the
 * directory (0755) if needed; -errno with @err. */
int hib_rate_save(const char *path, const struct hib_rate_store *rs, struct hib_error *err);

/* The least drop that measures a rate over any interval: 1 % of energy_now or
 * charge_now (far above their gauges' noise), three whole-percent steps of a
 * battery with capacity alone (one step may be rounding). */
#define HIB_BATTERY_MEASURE_DROP 10
#define HIB_BATTERY_MEASURE_DROP_COARSE 30

/*
 * The rate a battery showed between two readings @elapsed_usec apart, as
 * systemd computes it, the drop over the time: 0 when the readings teach
 * nothing (charging at either end, no loss, a drop too small to measure in
 * less than 10 minutes (HIB_BATTERY_MEASURE_DROP*), a rate over
 * HIB_BATTERY_RATE_MAX). Smoothed with @old (0: none) so one odd interval
 * does not swing the estimate.
 */
unsigned hib_rate_measure(const struct hib_battery *before, const struct hib_battery *after,
			  uint64_t elapsed_usec, unsigned old);

/* Learns from every battery found in both readings into @rs; the count of
 * rates updated. */
unsigned hib_rate_learn(struct hib_rate_store *rs, const struct hib_power *before,
			const struct hib_power *after, uint64_t elapsed_usec);

#endif
