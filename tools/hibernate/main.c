// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * hibernate — save the running system to disk and power off; bring it back.
 *
 * main: the options (cli.c), the config file under them and the rest on top,
 * then the command. This program owns the terminal and the exit codes;
 * libhibernate does the work. tool.h says which room holds what.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tool.h"
#include "util/util.h"

/* Root obeys the file (OnSuspend lines run as root): it is read from the
 * descriptor that was checked root's alone, every directory from / on. No
 * file is fine, unless one was named. */
static void load_config(struct control *ctl)
{
	const char *path = ctl->config_path ? ctl->config_path : HIB_CONFIG_PATH;
	char err[1024] = "";
	unsigned line = 0;
	int r;

	hib_config_init(&ctl->cfg);
	r = hib_config_load_trusted(&ctl->cfg, path, &line, err, sizeof(err));
	if (r == -ENOENT && !ctl->config_path)
		r = 0;
	if (r < 0) {
		if (line)
			fprintf(stderr, "hibernate: %s:%u: %s\n", path, line, err);
		else
			fprintf(stderr, "hibernate: %s\n", err[0] ? err : strerror(-r));
		exit(EXIT_FAILURE);
	}
}

/* The options that wait for the file, on top of it. */
static void apply_options(struct control *ctl, const char *const *given)
{
	bool loglevel = false;
	char err[256];

	for (size_t i = 0; i < cli_option_count(); i++) {
		const char *key = cli_option_key(i);

		if (!given[i])
			continue;
		if (hib_config_set(&ctl->cfg, key, given[i], err, sizeof(err)) < 0)
			bad_usage("--%s", err);
		loglevel |= strcmp(key, "loglevel") == 0;
	}
	/* --loglevel wins over -v and -q, the file's loglevel only when none is given. */
	if (ctl->cfg.loglevel >= 0 && (loglevel || !ctl->out.loglevel_set))
		ctl->out.loglevel = ctl->cfg.loglevel;
	ctl->cfg.opts.require_encryption = hib_config_require(&ctl->cfg);
	ctl->cfg.opts.tpm_pcrs = ctl->cfg.tpm_pcrs;
	ctl->cfg.opts.tpm_pin = ctl->cfg.tpm_pin;
	ctl->cfg.opts.tpm_fallback = ctl->cfg.tpm_fallback;
}

int main(int argc, char **argv)
{
	struct control ctl = { .run_lock_fd = -1 };
	const char **given = calloc(cli_option_count(), sizeof(*given));
	int r;

	if (!given)
		return EXIT_FAILURE;
	output_init(&ctl.out);
	hib_set_log(output_log, &ctl);
	cli_parse(&ctl, argc, argv, given);
	load_config(&ctl);
	apply_options(&ctl, given);
	free(given);
	/* The cycle's messages belong in the kernel log; queries need not go there. */
	if (cli_command_logs_to_kmsg(ctl.cmd))
		ctl.out.kmsg_fd = open("/dev/kmsg", O_WRONLY | O_CLOEXEC | O_NOCTTY);
	r = cli_run_command(&ctl);
	if (ctl.out.kmsg_fd >= 0)
		close(ctl.out.kmsg_fd);
	hib_config_free(&ctl.cfg);
	return r;
}
