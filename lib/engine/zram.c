// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * zram out of the way of the image (zram = swapoff, the default): every
 * active zram swap area but the target swapped off before the freeze, so its
 * pages come back into RAM and the kernel moves what must go to the target;
 * and on again after the cycle, as it was. zram = keep leaves them on.
 */
#include "engine/suspend-priv.h"

#define KIB_TO_MIB(k) ((unsigned long long)DIV_ROUND_UP((k), 1024))

/* What hib_zram_plan_fits refused, or swapoff found: the pages do not fit. */
static int zram_refuse(const struct hib_zram_plan *plan, const struct hib_target *t,
		       const struct hib_swap_area *a)
{
	return log_err(-ENOMEM,
		       "%s holds %llu MiB of swapped-out pages, more than the memory available "
		       "and the other swap areas can take besides %llu MiB kept free (%llu MiB): "
		       "it cannot be swapped off for the cycle, and left on it keeps in RAM what "
		       "the kernel must move to %s. Close programs, or set zram = keep in "
		       "/etc/hibernate.conf to try with it on",
		       a->path, KIB_TO_MIB(a->used_kib), KIB_TO_MIB(HIB_ZRAM_MARGIN_KIB),
		       KIB_TO_MIB(plan->room_kib), hib_target_name(t));
}

/*
 * zram swap out of the way, last before the freeze (the hooks have run, our
 * buffers are taken): swapped off, its pages come back into RAM, and the
 * kernel's preallocation then moves what must go to the target, not into
 * zram. A zram area cannot be lowered below the target while it is on (the
 * kernel changes a priority only through swapoff and swapon), so pages that
 * do not fit are a refusal, not a lesser way round.
 */
int suspend_zram_move_out(const struct suspend_ctx *sc, struct hib_zram_plan *plan)
{
	const struct hib_swap_env *env = hib_swap_env_get();
	int r;

	if (env->system && !hib_snapshot_can(sc->snap, HIB_SNAP_CAP_FREEZES_SYSTEM))
		return 0;
	r = hib_zram_plan_make(env, sc->t, plan);
	if (r < 0)
		return log_err(r, "reading the active swap areas failed: %m");
	if (sc->o->zram == HIB_ZRAM_KEEP) {
		for (size_t i = 0; i < plan->n; i++)
			log_info("%s (%llu MiB used) kept on as swap (zram = keep)",
				 plan->areas[i].a.path, KIB_TO_MIB(plan->areas[i].a.used_kib));
		plan->n = 0;
		return 0;
	}
	if (plan->n && !hib_zram_plan_fits(plan))
		return zram_refuse(plan, sc->t, &plan->areas[0].a);
	for (size_t i = 0; i < plan->n; i++) {
		struct hib_zram_area *z = &plan->areas[i];

		r = hib_swap_off(env, z->a.path);
		if (r == -ENOMEM) /* the kernel put it back on, as it was */
			return zram_refuse(plan, sc->t, &z->a);
		if (r < 0)
			return log_err(r,
				       "swapoff %s failed: %m; set zram = keep in "
				       "/etc/hibernate.conf to leave it on",
				       z->a.path);
		z->off = true;
		log_info("%s (%llu MiB used) swapped off for the cycle", z->a.path,
			 KIB_TO_MIB(z->a.used_kib));
	}
	return 0;
}

/* Every zram area suspend_zram_move_out swapped off, on again as it was: whichever
 * way the cycle ended. */
void suspend_zram_put_back(struct hib_zram_plan *plan)
{
	const struct hib_swap_env *env = hib_swap_env_get();

	for (size_t i = plan->n; i-- > 0;) {
		const struct hib_swap_area *a = &plan->areas[i].a;
		int r;

		if (!plan->areas[i].off)
			continue;
		r = hib_zram_on(env, a);
		if (r < 0)
			log_err(r,
				"swapon %s failed: %m; it stays off: run "
				"swapon --discard=pages -p %d %s",
				a->path, MAX(a->prio, 0), a->path);
		else if (a->prio >= 0)
			hib_log(HIB_LOG_PROGRESS,
				"%s (%llu MiB used) swapped off for the cycle, back on with "
				"priority %d",
				a->path, KIB_TO_MIB(a->used_kib), a->prio);
		else
			hib_log(HIB_LOG_PROGRESS,
				"%s (%llu MiB used) swapped off for the cycle, back on with "
				"the kernel's next priority (it had %d, its own)",
				a->path, KIB_TO_MIB(a->used_kib), a->prio);
	}
	hib_zram_plan_free(plan);
}
