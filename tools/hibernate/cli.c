// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The command line: one table of commands and one of options. getopt's
 * arguments, --help, --cli-tables (for tests/check-man and test-cli) and the
 * options' config keys all come from them; an option either fills a field of
 * struct control at once or waits for the config file (main.c) as a key.
 */
#include <errno.h>
#include <getopt.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/sleep.h"
#include "frontend/stats.h"
#include "tool.h"
#include "util/util.h"

/* ---- the tables ---------------------------------------------------------- */

struct cli_command {
	const char *name;
	const char *args;      /* what follows the name in usage */
	unsigned nargs;        /* it takes this many arguments */
	unsigned nargs_min;    /* or as few as this many */
	const char *nargs_msg; /* said when it gets another number */
	int (*run)(struct control *ctl);
	bool kmsg; /* a cycle: its messages belong in the kernel log too */
	const char *help;
};

static const struct cli_command commands[] = {
	[CMD_HIBERNATE] = { "hibernate", "[options]", 0, 0, NULL, do_hibernate, true,
			    "save the system to disk and power off" },
	[CMD_RESUME] = { "resume", "[options]", 0, 0, NULL, do_resume, true,
			 "load and restore an image (initramfs)" },
	[CMD_STATUS] = { "status", "[options]", 0, 0, NULL, do_status, false,
			 "show the target and its image" },
	[CMD_INVALIDATE] = { "invalidate", "[options]", 0, 0, NULL, do_invalidate, false,
			     "discard an image, keep the swap area" },
	[CMD_DOCTOR] = { "doctor", "[options]", 0, 0, NULL, do_doctor, false,
			 "can this machine hibernate? what to fix" },
	[CMD_LOGIND] = { "logind-setup", "[options]", 0, 0, NULL, do_logind_setup, false,
			 "tell logind whether doctor passes (boot unit)" },
	[CMD_OFFSET] = { "offset", "FILE", 1, 1, "offset: name one FILE", do_offset, false,
			 "kernel parameters that locate FILE" },
	[CMD_PREPARE] = { "prepare-file", "FILE MB", 2, 2,
			  "prepare-file: name FILE and SIZE in MiB", do_prepare, false,
			  "make FILE an image file of MB MiB (no swap)" },
	[CMD_CONFIG] = { "config", "ACTION [KEY]", 2, 1, CONFIG_USAGE, do_config, false,
			 "get KEY: one key's effective value, for scripts;\n"
			 "dump: every key's; check: is the file valid?\n"
			 "location: the target's UUID and offset for the\n"
			 "initramfs; initramfs: the file as it carries it" },
	[CMD_SETUP] = { "setup", "[options]", 0, 0, NULL, do_setup, false,
			"make this machine hibernate: a target, the config,\n"
			"the initramfs (hibernate-setup(8))" },
	[CMD_HISTORY] = { "history", "[options]", 0, 0, NULL, do_history, false,
			  "the cycles kept in the history, newest first" },
};

/*
 * An option stands for a config key (hib_config_set, after the file is read:
 * the argument, or @value for a flag), unless one of @str, @set and @handle
 * takes it at once: --device and --offset stay apart from the file's keys and
 * win over them where the target is picked. An option with no key says why
 * the file has no such setting; test-cli holds both tables to config-keys.c's keys.
 */
struct cli_option {
	const char *name; /* --name */
	char flag;        /* -f, or 0 */
	const char *arg;  /* its argument, as usage names it; NULL: none */
	const char *key;
	const char *value;
	size_t str; /* at once: the argument goes to this AT() field of struct control */
	size_t set; /* at once: this AT() field of struct control becomes true */
	void (*handle)(struct control *ctl, const char *arg); /* at once: this runs */
	const char *help; /* usage, '\n' between lines; NULL: not shown */
	const char *why;  /* no key: why not */
};

/* A field of struct control, for the option table (0: none). */
#define AT(field) (offsetof(struct control, field) + 1)

static void opt_offset(struct control *ctl, const char *arg)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(arg, &end, 0);
	if (errno || *end || !*arg || *arg == '-')
		bad_usage("--offset: '%s' is not a page number", arg);
	ctl->offset = v;
	ctl->offset_set = true;
}

static void opt_verbose(struct control *ctl, const char *arg)
{
	(void)arg;
	if (ctl->out.loglevel < HIB_LOG_DEBUG)
		ctl->out.loglevel++;
	ctl->out.loglevel_set = true;
}

static void opt_quiet(struct control *ctl, const char *arg)
{
	(void)arg;
	ctl->out.loglevel = HIB_LOG_ERR;
	ctl->out.loglevel_set = true;
}

static void opt_systemd_sleep(struct control *ctl, const char *arg)
{
	enum hib_sleep_op op;

	if (hib_sleep_op_parse(arg, &op) == 0) {
		ctl->sleep_op = hib_sleep_op_name(op);
		return;
	}
	bad_usage("--systemd-sleep: '%s' is none of hibernate, hybrid-sleep, "
		  "suspend-then-hibernate",
		  arg);
}

static void opt_size(struct control *ctl, const char *arg)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(arg, &end, 10);
	if (errno || *end || !*arg || *arg == '-' || v == 0 || v > (1ull << 30))
		bad_usage("--size: '%s' is not a size in MiB", arg);
	ctl->setup_size_mib = v;
}

static void opt_help(struct control *ctl, const char *arg);
static void opt_version(struct control *ctl, const char *arg);
static void opt_tables(struct control *ctl, const char *arg);

#define PRINTS_AND_EXITS "prints and exits"
#define ONE_RUN "one run's choice, never a standing setting"

static const struct cli_option options[] = {
	{ "device", 'd', "DEV", "device", .str = AT(device),
	  .help = "target: /dev/…, UUID=…, LABEL=…, PARTUUID=…, MAJ:MIN" },
	{ "offset", 'o', "PAGES", "offset", .handle = opt_offset,
	  .help = "page of the swap header inside DEV (resume_offset=)" },
	{ "compress", 'c', "CODEC", "compress", .help = "none, lz4 (default) or zstd[:LEVEL]" },
	{ "threads", 't', "N", "threads", .help = "codec threads (default: one per CPU)" },
	{ "image-size", 0, "MB", "image-size",
	  .help = "preferred image size in MiB, 'min' or 'kernel'" },
	{ "powerdown", 0, "MODE", "powerdown",
	  .help = "shutdown (default), platform, reboot or suspend\n"
		  "(suspend: sleep in RAM, resume from disk if power is lost)" },
	{ "test", 0, NULL, NULL, .set = AT(test_cycle),
	  .help = "write the image, then restore it at once: no power-off",
	  .why = "a dry run: " ONE_RUN },
	{ "verify", 0, NULL, "verify", "yes",
	  .help = "read the image back and check it before powering off" },
	{ "no-adaptive", 0, NULL, "adaptive", "no",
	  .help = "compress every block, even while the disk waits" },
	{ "io", 0, "MODE", "io",
	  .help = "auto (io_uring where the kernel has it) or sync (pread/pwrite)" },
	{ "no-cancel", 0, NULL, "cancel", "no",
	  .help = "neither Esc nor the power button cancels while the image is\n"
		  "written" },
	{ "auto-swapon", 0, NULL, "auto-swapon", "yes",
	  .help = "turn the swap area on for the cycle if it is off,\n"
		  "and off again after" },
	{ "encrypt", 0, NULL, "encrypt", "yes",
	  .help = "encrypt the image: asks for a passphrase (Argon2id),\n"
		  "or uses --key-file; resume asks for it again" },
	{ "key-file", 0, "FILE", "key-file", .help = "the key file for --encrypt and for resume" },
	{ "require-encryption", 0, NULL, "require-encryption", "yes",
	  .help = "resume only images sealed with the configured kind of key\n"
		  "(the default when encrypt or key-file is set)" },
	{ "no-require-encryption", 0, NULL, "require-encryption", "no",
	  .help = "resume images that are not encrypted too" },
	{ "tpm", 0, NULL, "encrypt", "tpm",
	  .help = "encrypt the image with a key sealed to the TPM 2.0:\n"
		  "resume unseals it with no question while the PCRs hold" },
	{ "tpm-pcrs", 0, "LIST", "tpm-pcrs",
	  .help = "PCRs the key is sealed to: auto (those of 0-7 the\n"
		  "SHA-256 bank has) or a list like 0,2,4-7" },
	{ "tpm-pin", 0, NULL, "tpm-pin", "yes",
	  .help = "--tpm also asks for a PIN, and resume too" },
	{ "tpm-fallback", 0, "MODE", "tpm-fallback",
	  .help = "none, or passphrase: the image also opens with one\n"
		  "(asked at resume when the PCRs changed)" },
	{ "force", 0, NULL, "force", "yes", .help = "a failing hook does not abort the cycle" },
	{ "no-hooks", 0, NULL, NULL, .set = AT(no_hooks),
	  .help = "run no hooks (see hibernate-hooks(7))",
	  .why = "no hooks at all: " ONE_RUN " (the file sets each hook's own key)" },
	{ "systemd-sleep", 0, "OPERATION", NULL, .handle = opt_systemd_sleep,
	  .help = "do what systemd-sleep does for OPERATION, with this\n"
		  "cycle: hibernate, hybrid-sleep (--powerdown suspend) or\n"
		  "suspend-then-hibernate (RAM, then disk after\n"
		  "sleep.conf's HibernateDelaySec=); the units' drop-ins",
	  .why = "which systemd sleep unit runs us: " ONE_RUN },
	{ "dry-run", 0, NULL, NULL, .set = AT(setup_dry),
	  .help = "setup: print the plan, change nothing", .why = "setup's: " ONE_RUN },
	{ "size", 0, "MB", NULL, .handle = opt_size,
	  .help = "setup: the file's size in MiB instead of the computed one",
	  .why = "setup's: " ONE_RUN },
	{ "undo", 0, NULL, NULL, .set = AT(setup_undo),
	  .help = "setup: reverse what setup did (its state file)", .why = "setup's: " ONE_RUN },
	{ "yes", 0, NULL, NULL, .set = AT(setup_yes), .help = "setup: do not ask before changing",
	  .why = "setup's: " ONE_RUN },
	{ "loglevel", 0, "N", "loglevel",
	  .help = "0 silent, 1 errors, 2 warnings, 3 progress (default),\n"
		  "4 info, 5 debug; messages also go to the kernel log" },
	{ "config", 0, "FILE", NULL, .str = AT(config_path),
	  .help = "configuration file (default " HIB_CONFIG_PATH ")",
	  .why = "names the file the keys are read from" },
	{ "snapshot-device", 0, "FILE", NULL, .str = AT(snapshot_path),
	  .why = "tests only: a snapshot device that is not the kernel's" },
	{ "verbose", 'v', NULL, NULL, .handle = opt_verbose,
	  .help = "more messages (repeat for debug)", .why = "loglevel one step up: " ONE_RUN },
	{ "quiet", 'q', NULL, NULL, .handle = opt_quiet, .help = "errors only",
	  .why = "loglevel 1: " ONE_RUN },
	{ "help", 'h', NULL, NULL, .handle = opt_help, .help = "this text",
	  .why = PRINTS_AND_EXITS },
	{ "version", 'V', NULL, NULL, .handle = opt_version, .help = "the version",
	  .why = PRINTS_AND_EXITS },
	{ "cli-tables", 0, NULL, NULL, .handle = opt_tables,
	  .why = "for tests/check-man and test-cli: " PRINTS_AND_EXITS },
};

/* The file's keys that no option sets, and why; a shipped hook's setting needs none. */
static const struct {
	const char *key, *why;
} keys_without_option[] = {
	{ "kernel-mismatch", "what resume does with another kernel's image: resume reads it "
			     "from the file the initramfs carries" },
	{ "unchecked-filesystems", "what resume does with a filesystem it cannot check: "
				   "resume reads it from the file the initramfs carries" },
	{ "resume-preload", "whether resume reads an encrypted image while its secret is "
			    "awaited: resume reads it from the file the initramfs carries" },
	{ "zram", "what a cycle does with zram swap beside the target: the system's setup, "
		  "not one run's" },
	{ "restore-working-set", "what happens after resume, in the background: the system's "
				 "setup, not one run's" },
	{ "restore-limit", "how long the restore after resume may take: the system's setup, "
			   "not one run's" },
	{ "cancel-keys", "which keys cancel: the machine's setup, not one run's (--no-cancel "
			 "turns them all off)" },
	{ "systemd-hooks", "which hooks join the cycle: the system's setup, not one run's" },
	{ "pm-utils-hooks", "which hooks join the cycle: the system's setup, not one run's" },
	{ "hook-timeout", "how long a hook may take: the system's setup, not one run's" },
	{ "kdf-passes", "the passphrase's Argon2id cost: the system's setup, not one run's" },
	{ "kdf-memory", "the passphrase's Argon2id memory: the system's setup, sized for the "
			"initramfs that resumes" },
};

#define HOOK_SETTING_WHY "a shipped hook's setting: the hooks get it in their environment"

static const struct cli_option *option_for_key(const char *key)
{
	for (size_t i = 0; i < ARRAY_SIZE(options); i++)
		if (options[i].key && strcmp(options[i].key, key) == 0)
			return &options[i];
	return NULL;
}

static const char *key_why(const char *key, const char *hook_env)
{
	if (hook_env)
		return HOOK_SETTING_WHY;
	for (size_t i = 0; i < ARRAY_SIZE(keys_without_option); i++)
		if (strcmp(keys_without_option[i].key, key) == 0)
			return keys_without_option[i].why;
	return "";
}

/* " LEFT  help", the help's further lines under its first. */
static void usage_line(int width, const char *left, const char *help)
{
	const char *nl;

	printf(" %-*s ", width, left);
	for (; (nl = strchr(help, '\n')); help = nl + 1)
		printf("%.*s\n%*s", (int)(nl - help), help, width + 2, "");
	printf("%s\n", help);
}

static void __attribute__((noreturn)) usage(void)
{
	char left[64];

	printf("Usage:\n");
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++) {
		const struct cli_command *c = &commands[i];

		if (i == CMD_HIBERNATE)
			snprintf(left, sizeof(left), "hibernate %s", c->args);
		else
			snprintf(left, sizeof(left), "hibernate %s %s", c->name, c->args);
		usage_line(32, left, c->help);
	}
	printf("\nOptions:\n");
	for (size_t i = 0; i < ARRAY_SIZE(options); i++) {
		const struct cli_option *o = &options[i];

		if (!o->help)
			continue;
		snprintf(left, sizeof(left), "%c%c%c --%s%s%s", o->flag ? '-' : ' ',
			 o->flag ? o->flag : ' ', o->flag ? ',' : ' ', o->name, o->arg ? " " : "",
			 o->arg ? o->arg : "");
		usage_line(22, left, o->help);
	}
	printf("\n"
	       "Without --device the target is, in order: 'device' in the config file, the\n"
	       "kernel's resume= and resume_offset=, the only active swap partition.\n"
	       "DEV may be a swap file or an image file (prepare-file): hibernate writes to\n"
	       "the blocks under it, and resume finds it by resume= and resume_offset=.\n"
	       "Exit status: 0 done (or resumed), 1 failed, 2 bad usage, 3 cancelled.\n"
	       "See hibernate(8).\n");
	exit(EXIT_SUCCESS);
}

static void opt_help(struct control *ctl, const char *arg)
{
	(void)ctl, (void)arg;
	usage();
}

static void opt_version(struct control *ctl, const char *arg)
{
	(void)ctl, (void)arg;
	printf("hibernate %s\n", hib_version());
	exit(EXIT_SUCCESS);
}

/* Tab-separated, '-' for none:
 *   command NAME ARGS
 *   option --NAME -F|- ARG KEY shown|hidden now|file WHY   (file: set after the file is read)
 *   key NAME --OPTION|- WHY
 *   stats SIDE KEY */
static void opt_tables(struct control *ctl, const char *arg)
{
	const char *key, *env;

	(void)ctl, (void)arg;
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		printf("command\t%s\t%s\n", commands[i].name, commands[i].args);
	for (size_t i = 0; i < ARRAY_SIZE(options); i++) {
		const struct cli_option *o = &options[i];

		printf("option\t--%s\t%s%c\t%s\t%s\t%s\t%s\t%s\n", o->name, o->flag ? "-" : "",
		       o->flag ? o->flag : '-', o->arg ? o->arg : "-", o->key ? o->key : "-",
		       o->help ? "shown" : "hidden", o->str || o->set || o->handle ? "now" : "file",
		       o->why ? o->why : "");
	}
	for (size_t i = 0; (key = hib_config_key(i, &env)); i++) {
		const struct cli_option *o = option_for_key(key);

		printf("key\t%s\t%s%s\t%s\n", key, o ? "--" : "-", o ? o->name : "",
		       o ? "" : key_why(key, env));
	}
	for (int side = HIB_STATS_HIBERNATE; side <= HIB_STATS_RESUMED; side++)
		for (size_t i = 0; (key = hib_stats_key(side, i)); i++)
			printf("stats\t%s\t%s\n", hib_stats_side_name(side), key);
	exit(EXIT_SUCCESS);
}

/* getopt_long's code for options[i]: its flag, or this plus i. */
#define OPT_LONG_ONLY 256

static const struct cli_option *option_of(int c)
{
	if (c >= OPT_LONG_ONLY && (size_t)(c - OPT_LONG_ONLY) < ARRAY_SIZE(options))
		return &options[c - OPT_LONG_ONLY];
	for (size_t i = 0; i < ARRAY_SIZE(options); i++)
		if (options[i].flag && options[i].flag == c)
			return &options[i];
	return NULL;
}

/* Options taken at once are; the others wait in @given for the config file. */
static void parse_options(struct control *ctl, int argc, char **argv, const char **given)
{
	struct option longopts[ARRAY_SIZE(options) + 1] = { 0 };
	char shorts[2 * ARRAY_SIZE(options) + 1], *sp = shorts;
	int c;

	for (size_t i = 0; i < ARRAY_SIZE(options); i++) {
		const struct cli_option *o = &options[i];

		longopts[i] = (struct option){ o->name, o->arg ? required_argument : no_argument,
					       NULL, o->flag ? o->flag : OPT_LONG_ONLY + (int)i };
		if (o->flag) {
			*sp++ = o->flag;
			if (o->arg)
				*sp++ = ':';
		}
	}
	*sp = 0;
	while ((c = getopt_long(argc, argv, shorts, longopts, NULL)) != -1) {
		const struct cli_option *o = option_of(c);

		if (!o)
			bad_usage("unknown or incomplete option");
		if (o->str)
			*(const char **)((char *)ctl + o->str - 1) = optarg;
		else if (o->set)
			*(bool *)((char *)ctl + o->set - 1) = true;
		else if (o->handle)
			o->handle(ctl, optarg);
		else
			given[o - options] = o->arg ? optarg : o->value;
	}
}

static void parse_command(struct control *ctl, int argc, char **argv)
{
	const struct cli_command *cmd;

	if (optind < argc) {
		const char *word = argv[optind++];
		size_t i = 0;

		while (i < ARRAY_SIZE(commands) && strcmp(word, commands[i].name) != 0)
			i++;
		if (i == ARRAY_SIZE(commands))
			bad_usage("unknown command '%s'", word);
		ctl->cmd = (enum command)i;
	}
	cmd = &commands[ctl->cmd];
	if (cmd->nargs) {
		unsigned n = (unsigned)(argc - optind);

		if (n < cmd->nargs_min || n > cmd->nargs)
			bad_usage("%s", cmd->nargs_msg);
		for (unsigned k = 0; k < n; k++)
			ctl->args[k] = argv[optind++];
	}
	if (optind < argc)
		bad_usage("unexpected argument '%s'", argv[optind]);
}

void cli_parse(struct control *ctl, int argc, char **argv, const char **given)
{
	parse_options(ctl, argc, argv, given);
	parse_command(ctl, argc, argv);
}

size_t cli_option_count(void)
{
	return ARRAY_SIZE(options);
}

const char *cli_option_key(size_t i)
{
	return i < ARRAY_SIZE(options) ? options[i].key : NULL;
}

int cli_run_command(struct control *ctl)
{
	return commands[ctl->cmd].run(ctl);
}

bool cli_command_logs_to_kmsg(enum command cmd)
{
	return commands[cmd].kmsg;
}
