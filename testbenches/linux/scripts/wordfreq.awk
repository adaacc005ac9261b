# Word frequencies of a text: lower-cased words, punctuation stripped, then the words seen
# at least 25 times (in awk's hash order) and the totals.
{
    for (i = 1; i <= NF; i++) {
        w = tolower($i)
        gsub(/[^a-z]/, "", w)
        if (w != "") {
            count[w]++
            total++
        }
    }
    lines++
}
END {
    for (w in count)
        if (count[w] >= 25)
            printf "%6d %s\n", count[w], w
    printf "lines %d words %d distinct %d\n", lines, total, length(count)
}
