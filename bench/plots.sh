#!/usr/bin/env bash
# bench/plots.sh [RESULTS]: renders the benchmark plots (PNG and SVG) into RESULTS/plots/ and
# writes RESULTS/README.md, from the CSV files bench/run left in RESULTS (default: results/).
# Runs nothing but gnuplot and bench/report.py, so `make plots` re-renders without re-measuring.
#
# bench/report.py computes the tables (one .dat file per plot, one column per back-end or
# algorithm) and a manifest, one plot per line: kind, name, data file, columns, title, x label,
# y label, log base of x and of y (0: linear), an optional reference line "value|label", the
# style of each series ("RRGGBB/point type/dash type", comma separated: one fixed colour per
# back-end, algorithm or phase in every plot), an optional xtics list (a tick at each measured
# x, labelled 4Ki, 16Mi or P) and the bottom of a logarithmic y axis for bars.
# The kinds are drawn by the three templates below.
# Exit status: 0 done; 2 usage error or gnuplot missing.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
results=${1:-$here/../results}

die() {
    echo "sortex-plots: error: $*" >&2
    exit 2
}
[[ $# -le 1 ]] || die "too many arguments ($*); usage: bench/plots.sh [RESULTS]"
[[ -d $results ]] || die "no results directory ($results); run bench/run first"
command -v gnuplot >/dev/null || die "gnuplot is not installed (make deps)"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/sortex-plots.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
python3 "$here/report.py" tables "$results" "$tmp"

# gnuplot strings are double-quoted; escape what would end them.
q() {
    local s=${1//\\/\\\\}
    printf '"%s"' "${s//\"/\\\"}"
}

# The lines common to every plot; $1 is png or svg.
preamble() {
    local term=$1 out=$2 title=$3 xlabel=$4 ylabel=$5
    if [[ $term == png ]]; then
        echo "set terminal pngcairo size 1000,560 noenhanced font 'sans,10'"
    else
        echo "set terminal svg size 1000,560 dynamic noenhanced font 'sans,10'" \
            "background rgb 'white'"
    fi
    cat <<EOF
set output $(q "$out")
set title $(q "$title")
set xlabel $(q "$xlabel")
set ylabel $(q "$ylabel")
set datafile separator "\t"
set datafile missing "?"
set key outside right top
set grid ytics
set yrange [0:*]
EOF
}

# The axes: x ticks at the measured values, y logarithmic when the values span decades (bars
# then start from ymin, a little below the least value, rather than from 0).
axes() {
    local logx=$1 logy=$2 ticks=$3 ymin=$4
    [[ $logx == 0 ]] || echo "set logscale x $logx"
    [[ $ticks == - ]] || echo "set xtics $ticks"
    if [[ $logy != 0 ]]; then
        echo "set logscale y $logy; set format y '%g'"
        if [[ $ymin != - ]]; then echo "set yrange [$ymin:*]"; else echo "set yrange [*:*]"; fi
    fi
}

# "plot" and one clause per column 2..N, each in its series' own style: $3 is the "using" part
# with COL standing for the column, $4 what the clause is drawn with ("" for bars).
series() {
    local data=$1 styles=$2 using=$3 with=$4 i=2 s colour pt dt extra clauses=()
    local -a style
    IFS=, read -ra style <<<"$styles"
    for s in "${style[@]}"; do
        IFS=/ read -r colour pt dt <<<"$s"
        extra=""
        [[ -z $with ]] || extra=" pointtype $pt dashtype $dt"
        clauses+=("$(q "$data") using ${using//COL/$i} $with linecolor rgb '#$colour'$extra \
title columnheader($i)")
        i=$((i + 1))
    done
    local IFS=,
    echo "plot ${clauses[*]}"
}

# One line per series over a numeric x.
template_lines() {
    local data=$1 styles=$2 ref=$3 plot
    # A margin on either side, so the first and last points and their tick labels show.
    echo "set grid xtics; set offsets graph 0.03, graph 0.03, 0, 0"
    plot=$(series "$data" "$styles" "1:COL" "with linespoints pointsize 0.9 linewidth 1.5")
    if [[ $ref != - ]]; then
        plot+=", ${ref%%|*} with lines dashtype 2 linecolor rgb 'gray40' title $(q "${ref#*|}")"
    fi
    echo "$plot"
}

# One bar per row, its columns stacked (phases of a sort).
template_stacked() {
    local data=$1 styles=$2
    cat <<EOF
set style data histograms
set style histogram rowstacked
set style fill solid 0.85 border -1
set boxwidth 0.7
set xtics rotate by -30 left
EOF
    series "$data" "$styles" "COL:xtic(1)" ""
}

# Groups of bars: one group per row, one bar per column (back-ends per pattern).
template_clustered() {
    local data=$1 styles=$2
    cat <<EOF
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set xtics rotate by -30 left
EOF
    series "$data" "$styles" "COL:xtic(1)" ""
}

plots=$results/plots
mkdir -p "$plots"
# Plots are generated content: a plot whose data is gone must not linger.
rm -f "$plots"/*.png "$plots"/*.svg
count=0
while IFS=$'\t' read -r kind name data _ title xlabel ylabel logx logy ref styles ticks ymin; do
    [[ $title != - ]] || title=""
    [[ $xlabel != - ]] || xlabel=""
    [[ $ylabel != - ]] || ylabel=""
    for term in png svg; do
        {
            preamble "$term" "$plots/$name.$term" "$title" "$xlabel" "$ylabel"
            axes "$logx" "$logy" "$ticks" "$ymin"
            case $kind in
            lines) template_lines "$data" "$styles" "$ref" ;;
            stacked) template_stacked "$data" "$styles" ;;
            clustered) template_clustered "$data" "$styles" ;;
            *) die "unknown plot kind ($kind)" ;;
            esac
        } >"$tmp/$name.$term.gp"
        if ! gnuplot "$tmp/$name.$term.gp" 2>"$tmp/gnuplot.log"; then
            cat "$tmp/gnuplot.log" >&2
            die "gnuplot failed on $name.$term"
        fi
    done
    count=$((count + 1))
done <"$tmp/plots.tsv"

python3 "$here/report.py" readme "$results"
echo "sortex-plots: $count plots (PNG and SVG) in $plots; $results/README.md written" >&2
