/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef HIB_CONFIG_H
#define HIB_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hibernate.h"

#define HIB_CONFIG_PATH "/etc/hibernate.conf"

struct hib_config {
	char *device;
	uint64_t offset;
	bool offset_set;
	int loglevel;          /* -1: not set */
	bool cancel;           /* Esc cancels while writing (default yes) */
	bool encrypt;          /* encrypt the image (passphrase, or key-file if set) */
	char *key_file;        /* key file for encryption and resume */
	struct hib_options opts;
};

void hib_config_init(struct hib_config *c);
void hib_config_free(struct hib_config *c);
/* One key; on error writes a message to @err. -ENOKEY unknown key, -EINVAL bad value. */
int hib_config_set(struct hib_config *c, const char *key, const char *value, char *err,
		   size_t errlen);
/* A whole file; on error *ret_line is the offending line. -ENOENT when absent. */
int hib_config_load(struct hib_config *c, const char *path, unsigned *ret_line, char *err,
		    size_t errlen);

#endif
