# Per-city totals of records.csv (run with -F,): quantity, turnover (quantity * price, in
# floating point), the most expensive item and the codes that start with a vowel.
NR == 1 { next }
{
    qty[$3] += $4
    turnover[$3] += $4 * $5
    if ($5 > maxp[$3]) {
        maxp[$3] = $5
        maxn[$3] = $2
    }
    if ($6 ~ /^[AEU]/)
        vowel[$3]++
    n++
}
END {
    for (c in qty)
        printf "%-10s qty %7d turnover %12.2f max %7.2f %-24s vowel-codes %d\n", c, qty[c], turnover[c], maxp[c], maxn[c], vowel[c]
    printf "records %d\n", n
}
