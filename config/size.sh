#!/bin/sh
# Prints the stripped size of the binary and what each part contributes, from the link map
# (file-backed sections kept by --gc-sections: .text, .rodata, .data, per object or library).
# Usage: size.sh BINARY MAPFILE
bin=$1 map=$2
printf '%-28s %9d bytes (stripped file)\n' "$bin" "$(stat -c %s "$bin")"
awk '
/^Discarded input sections/ { skip = 1 }
/^Memory map|^Linker script and memory map/ { skip = 0 }
skip { next }
# a section line: " .text.name 0xADDR 0xSIZE file" (name may sit alone on the line before)
/^ \.(text|rodata|data|tdata)/ && NF == 1 { pending = 1; next }
pending && NF >= 3 && $1 ~ /^0x/ { addsz($2, $3); pending = 0; next }
/^ \.(text|rodata|data|tdata)/ && NF >= 4 && $2 ~ /^0x/ { addsz($3, $4); next }
{ pending = 0 }
function hex2num(h,   i, n) {
	n = 0; h = tolower(substr(h, 3))
	for (i = 1; i <= length(h); i++) n = n * 16 + index("0123456789abcdef", substr(h, i, 1)) - 1
	return n
}
function addsz(hex, file,   n) {
	n = hex2num(hex); if (n == 0) return
	if (file ~ /libc\.a|crt|libgcc/) part = "libc+runtime"
	else if (file ~ /libz\.a/) part = "zlib"
	else if (file ~ /liblzo2\.a/) part = "lzo2"
	else if (file ~ /libzstd\.a/) part = "zstd"
	else { part = file; sub(/.*obj\//, "", part); sub(/\.o$/, "", part) }
	sz[part] += n
}
END { for (p in sz) printf "%-28s %9d\n", p, sz[p] }' "$map" | sort -k2 -n -r
