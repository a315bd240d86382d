#!/bin/sh
# The corrupt scenario with more trials (the host decides how many).
exec sh /scenarios/corrupt.sh "$@"
