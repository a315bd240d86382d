#!/bin/sh
# swapfile-ext4's steps on xfs (see swapfile-ext4.sh).
# shellcheck disable=SC2034 # read by swapfile-ext4.sh
SWAPFILE_FS=xfs
# shellcheck source=swapfile-ext4.sh
. /scenarios/swapfile-ext4.sh
