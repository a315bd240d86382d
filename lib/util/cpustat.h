/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * How busy the CPUs were over a stretch of time, from /proc/stat: the time
 * not idle (nor waiting for I/O), summed over the CPUs.  The bench sets it
 * against a phase's time on every CPU: a phase whose CPUs were busy
 * throughout can only get faster by doing less work.  A virtual machine's
 * CPUs count as busy while its host runs something else (no steal time
 * under TCG): only an idle host's numbers say it.
 */
#ifndef HIB_CPUSTAT_H
#define HIB_CPUSTAT_H

#include <stdbool.h>
#include <stdint.h>

struct hib_cpu_sample {
	uint64_t busy_ticks; /* USER_HZ ticks since boot, all CPUs */
	bool ok;
};

/* The busy ticks of /proc/stat's text (its "cpu " line): 0 or -EINVAL. */
int hib_cpu_parse(const char *text, uint64_t *ret_busy_ticks);
/* Now; .ok false where /proc/stat cannot be read. */
struct hib_cpu_sample hib_cpu_sample(void);
/* Busy ms between two samples, summed over the CPUs; 0 unless both are ok. */
uint64_t hib_cpu_busy_ms(const struct hib_cpu_sample *from, const struct hib_cpu_sample *to);
/* The CPUs online (at least 1). */
unsigned hib_cpus_online(void);

#endif
