# config/usage.sh: the entries of the usage blob. Arguments: GENDIR/commands.h, then a list
# of "SOURCE PREPROCESSED" lines; -v ids=FILE (the #defines are appended), -v texts=FILE
# (the entries, each ending with a NUL).

# The C string literals at the start of s up to the ";" ending a declaration (or the
# end of s), decoded and joined; pos is left after them.
function literals(s,   out, c, d, n, e, len) {
	len = length(s)
	for (pos = 1; pos <= len; pos++) {
		c = substr(s, pos, 1)
		if (c == ";") return out
		if (c != "\"") continue
		for (pos++; (c = substr(s, pos, 1)) != "\"" && pos <= len; pos++) {
			if (c != "\\") { out = out c; continue }
			c = substr(s, ++pos, 1)
			if ((e = index("ntrabfv", c))) { out = out substr("\n\t\r\a\b\f\v", e, 1); continue }
			if (c ~ /[0-7]/) {
				d = pos
				for (n = 0; pos - d < 3 && (c = substr(s, pos, 1)) ~ /[0-7]/; pos++)
					n = n * 8 + c
				pos--; out = out sprintf("%c", n); continue
			}
			if (c == "x") {
				for (n = 0; (c = tolower(substr(s, pos + 1, 1))) ~ /[0-9a-f]/; pos++)
					n = n * 16 + index("0123456789abcdef", c) - 1
				out = out sprintf("%c", n); continue
			}
			out = out c   # \\ \" \' \?
		}
	}
	return out
}
function entry(text) { printf "%s%c", text, 0 > texts; return nentries++ }

FILENAME == ARGV[1] {   # commands.h: CMD("words", fn, "description") or CMD_OFF("words")
	if (/^CMD\(/) { sub(/^CMD\("[^"]*", *[A-Za-z0-9_]+, */, ""); entry(literals($0)) }
	else if (/^CMD_OFF\(/) entry("")
	next
}
{
	src = $1; file = src; sub(/\.c$/, "", file); gsub(/[^A-Za-z0-9_]/, "_", file)
	all = ""
	while ((getline line < $2) > 0) all = all line "\n"
	close($2)
	while (match(all, /__usage_text__[ \t\n]+[A-Za-z_0-9]+[ \t\n]*=/)) {
		decl = substr(all, RSTART, RLENGTH); all = substr(all, RSTART + RLENGTH)
		sub(/^__usage_text__[ \t\n]+/, "", decl); sub(/[ \t\n]*=$/, "", decl)
		id = "USAGE_ID_" file "__" decl
		if (id in seen) { print src ": two usage texts named " decl > "/dev/stderr"; exit 1 }
		seen[id] = 1
		printf "#define %s %d\n", id, entry(literals(all)) >> ids
		all = substr(all, pos)
	}
}
