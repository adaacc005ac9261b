# Rewrites of a text: drop blank lines, bracket capitalized words, mark numbers, swap the
# first two words of lines that end a question, parenthesize a few words, vowels of long words.
/^$/d
s/\<[A-Z][a-z]*\>/[&]/g
s/[0-9][0-9]*/#&#/g
/?$/s/^\([^ ]*\) \([^ ]*\)/\2 \1/
s/\<\(the\|and\|of\|to\)\>/(&)/g
s/\([a-z]\{3\}\)ing\>/\1ING/g
s/, */; /g
/[.?]$/!s/$/ .../
y/aeiou/AEIOU/
