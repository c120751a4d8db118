#!/bin/sh
echo "deps.sh: placeholder" >&2; exit 1
