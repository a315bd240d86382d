// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * What cancels a cycle while its image is written: Esc on the console, and
 * the power (and sleep) button, read from the input devices by this process
 * itself, since every other one is frozen then. Which keys: cancel-keys, and
 * none at all with cancel = no (--no-cancel). Which devices and which events:
 * lib/frontend/cancelkeys.c decides; here they are opened, grabbed and read.
 *
 * The devices are grabbed (EVIOCGRAB) from arming to disarming: logind reads
 * the same buttons and is frozen during the write; without the grab the
 * press would wait in its queue and, once it thaws after the cancel, power
 * the machine off or hibernate it again. Grabbed, the press is ours alone.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "tool.h"
#include "util/util.h"

#define INPUT_DIR "/dev/input"

/* ---- Esc on the console --------------------------------------------------- */

/* Raw, non-blocking keys from a terminal for the length of the write; true
 * when it is. */
static bool tty_arm(int fd, struct termios *saved)
{
	struct termios tio;

	if (fd < 0 || !isatty(fd) || tcgetattr(fd, saved) < 0)
		return false;
	tio = *saved;
	tio.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
	tio.c_cc[VMIN] = 0;
	tio.c_cc[VTIME] = 0;
	/* An Esc typed before the cycle started is not a request to cancel it. */
	tcflush(fd, TCIFLUSH);
	return tcsetattr(fd, TCSANOW, &tio) == 0;
}

static bool tty_esc(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	char buf[64];

	while (poll(&p, 1, 0) > 0 && (p.revents & POLLIN)) {
		ssize_t n = read(fd, buf, sizeof(buf));
		if (n <= 0)
			return false;
		if (memchr(buf, 0x1b, (size_t)n))
			return true;
	}
	return false;
}

/* ---- the power button ----------------------------------------------------- */

/* Whatever @fd has queued, read and judged: true when it asks to cancel. */
static bool input_read(int fd, unsigned keys, bool *ret_gone)
{
	struct input_event ev[64];
	bool cancel = false;
	ssize_t n;

	while ((n = read(fd, ev, sizeof(ev))) > 0)
		cancel |= hib_cancel_events(ev, (size_t)n / sizeof(ev[0]), keys);
	*ret_gone = n < 0 && errno == ENODEV; /* unplugged */
	return cancel;
}

/* /dev/input/@name, when its keys make it one to watch: grabbed, drained, open. */
static int input_open(struct control *ctl, int dir, const char *name, unsigned keys, bool *ret_esc)
{
	unsigned long bits[HIB_KEY_BITS_LONGS] = { 0 };
	char label[128] = "";
	bool gone;
	int fd = openat(dir, name, O_RDONLY | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0)
		return -1;
	if (ioctl(fd, EVIOCGBIT(EV_KEY, sizeof(bits)), bits) < 0 ||
	    !hib_cancel_device_wanted(bits, ARRAY_SIZE(bits), keys)) {
		close(fd);
		return -1;
	}
	ioctl(fd, EVIOCGNAME(sizeof(label) - 1), label);
	if (ioctl(fd, EVIOCGRAB, 1) < 0) {
		tlog(ctl, HIB_LOG_WARN,
		     INPUT_DIR "/%s (%s): another program holds it (%s): its button does not "
			       "cancel",
		     name, label, strerror(errno));
		close(fd);
		return -1;
	}
	/* A press from before the cycle is no request to cancel it. */
	input_read(fd, 0, &gone);
	*ret_esc |= hib_cancel_device_esc(bits, ARRAY_SIZE(bits), keys);
	tlog(ctl, HIB_LOG_INFO, "watching " INPUT_DIR "/%s (%s) while the image is written", name,
	     label);
	return fd;
}

static void inputs_arm(struct control *ctl, struct cancel_watch *c)
{
	DIR *d = opendir(INPUT_DIR);
	struct dirent *de;

	if (!d) {
		tlog(ctl, HIB_LOG_INFO, INPUT_DIR ": %s: no button cancels", strerror(errno));
		return;
	}
	while ((de = readdir(d)) && c->n_input < ARRAY_SIZE(c->input)) {
		int fd;

		if (strncmp(de->d_name, "event", 5) != 0)
			continue;
		fd = input_open(ctl, dirfd(d), de->d_name, c->keys, &c->input_esc);
		if (fd >= 0)
			c->input[c->n_input++] = fd;
	}
	closedir(d);
}

/* ---- the watch ------------------------------------------------------------ */

void cancel_arm(struct control *ctl, struct cancel_watch *c)
{
	memset(c, 0, sizeof(*c));
	c->keys = ctl->cfg.cancel ? ctl->cfg.cancel_keys : 0;
	c->screen_fd = ctl->out.screen_fd;
	if (c->keys & HIB_CANCEL_ESC) {
		c->tty = tty_arm(STDIN_FILENO, &c->saved);
		c->screen = tty_arm(c->screen_fd, &c->screen_saved);
	}
	if (c->keys & HIB_CANCEL_INPUT_KEYS)
		inputs_arm(ctl, c);
	ctl->out.cancel_hint = c->tty || c->screen || c->input_esc ? "Esc cancels"
			       : c->n_input                        ? "Power cancels"
								   : NULL;
}

void cancel_disarm(struct control *ctl, struct cancel_watch *c)
{
	if (c->tty)
		tcsetattr(STDIN_FILENO, TCSANOW, &c->saved);
	if (c->screen)
		tcsetattr(c->screen_fd, TCSANOW, &c->screen_saved);
	c->tty = c->screen = false;
	for (size_t i = 0; i < c->n_input; i++) {
		if (c->input[i] < 0)
			continue;
		ioctl(c->input[i], EVIOCGRAB, 0);
		close(c->input[i]);
	}
	c->n_input = 0;
	c->input_esc = false;
	ctl->out.cancel_hint = NULL;
}

bool cancel_requested(void *ud)
{
	struct cancel_watch *c = ud;
	bool cancel = false;

	if (run_stop_signal)
		return true;
	if ((c->tty && tty_esc(STDIN_FILENO)) || (c->screen && tty_esc(c->screen_fd)))
		return true;
	for (size_t i = 0; i < c->n_input; i++) {
		bool gone = false;

		if (c->input[i] < 0)
			continue;
		cancel |= input_read(c->input[i], c->keys, &gone);
		if (gone) {
			close(c->input[i]);
			c->input[i] = -1;
		}
	}
	return cancel;
}

const char *cancel_what(const struct cancel_watch *c)
{
	bool buttons = c->n_input > 0, esc = c->tty || c->screen || c->input_esc;

	if (esc && buttons)
		return (c->keys & HIB_CANCEL_SLEEP) ? "Esc, the power or the sleep button"
						    : "Esc or the power button";
	if (esc)
		return "Esc";
	if (buttons)
		return (c->keys & HIB_CANCEL_SLEEP) ? "the power or the sleep button"
						    : "the power button";
	return NULL;
}
