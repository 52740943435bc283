#!/usr/bin/env bash
# bench/plots.sh [RESULTS]: renders the benchmark plots (PNG and SVG) into RESULTS/plots/ and
# writes RESULTS/README.md, from the CSV files bench/run left in RESULTS (default: results/).
# Runs nothing but gnuplot and bench/report.py, so `make plots` re-renders without re-measuring.
#
# bench/report.py computes the tables (one .dat file per plot, one column per back-end or
# algorithm, or three: its median and the fastest and slowest repetition, for error bars) and a
# manifest, one plot per line: kind, name, data file, columns, title, x label, y label, log base
# of x and of y (0: linear), an optional reference line "value|label", the style of each series
# ("RRGGBB/point type/dash type", comma separated: one fixed colour and point type per
# back-end, algorithm or phase in every plot, from a colour-blind-safe scheme), an optional
# xtics list (a tick at each measured x, labelled 4 KiB, 16 MiB or P), the bottom of a
# logarithmic y axis for bars, whether the series carry error bars (1) or not (0), an optional
# ytics list (times labelled in µs, ms, s), an optional shaded region "x|label" from x on (more
# ranks than cores), and the label of an optional shaded band behind the lines (the range of
# every back-end: its low and high are then the data's first two columns).
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
# then start from ymin, a little below the least value, rather than from 0), y ticks labelled in
# time units where given, and the shaded region of mark ("x|label").
axes() {
    local logx=$1 logy=$2 ticks=$3 ymin=$4 yticks=$5 mark=$6
    [[ $logx == 0 ]] || echo "set logscale x $logx"
    [[ $ticks == - ]] || echo "set xtics $ticks"
    if [[ $logy != 0 ]]; then
        echo "set logscale y $logy; set format y '%g'"
        if [[ $ymin != - ]]; then echo "set yrange [$ymin:*]"; else echo "set yrange [*:*]"; fi
    fi
    [[ $yticks == - ]] || echo "set ytics $yticks"
    if [[ $mark != - ]]; then
        echo "set object 1 rect from first ${mark%%|*}, graph 0 to graph 1, graph 1" \
            "fillcolor rgb '#FDEBD3' fillstyle solid 1.0 noborder behind"
        echo "set label 1 $(q "${mark#*|}") at first ${mark%%|*}, graph 0.96 left offset 0.5,0" \
            "textcolor rgb 'gray30'"
    fi
}

# One clause per series, each in its own style, its columns from $5 on, $6 columns apart: $3 is
# the "using" part with COL, COL1 and COL2 standing for its columns, $4 what it is drawn with
# ("" for bars).
series() {
    local data=$1 styles=$2 using=$3 with=$4 i=$5 step=$6 s colour pt dt extra u clauses=()
    local -a style
    IFS=, read -ra style <<<"$styles"
    for s in "${style[@]}"; do
        IFS=/ read -r colour pt dt <<<"$s"
        extra=""
        [[ -z $with ]] || extra=" pointtype $pt dashtype $dt"
        u=${using//COL2/$((i + 2))}
        u=${u//COL1/$((i + 1))}
        clauses+=("$(q "$data") using ${u//COL/$i} $with linecolor rgb '#$colour'$extra \
title columnheader($i)")
        i=$((i + step))
    done
    local IFS=,
    echo "${clauses[*]}"
}

# One line per series over a numeric x, with error bars when the series carry them, over the
# shaded band when there is one.
template_lines() {
    local data=$1 styles=$2 ref=$3 errors=$4 band=$5 plot first=2
    # A margin on either side, so the first and last points and their tick labels show.
    echo "set grid xtics; set autoscale xfix; set offsets graph 0.03, graph 0.03, 0, 0"
    plot="plot "
    if [[ $band != - ]]; then
        plot+="$(q "$data") using 1:2:3 with filledcurves fillcolor rgb '#E6E6E6'"
        plot+=" fillstyle solid 1.0 title $(q "$band"), "
        first=4
    fi
    if [[ $errors == 1 ]]; then
        plot+=$(series "$data" "$styles" "1:COL:COL1:COL2" \
            "with yerrorlines pointsize 0.9 linewidth 1.5" "$first" 3)
    else
        plot+=$(series "$data" "$styles" "1:COL" "with linespoints pointsize 0.9 linewidth 1.5" \
            "$first" 1)
    fi
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
    echo "plot $(series "$data" "$styles" "COL:xtic(1)" "" 2 1)"
}

# Groups of bars: one group per row, one bar per column (back-ends per pattern), each with its
# error bar when the series carry them.
template_clustered() {
    local data=$1 styles=$2 errors=$3
    if [[ $errors == 1 ]]; then
        echo "set style histogram errorbars gap 1 linewidth 1"
    else
        echo "set style histogram clustered gap 1"
    fi
    cat <<EOF
set style data histograms
set style fill solid 0.85 border -1
set xtics rotate by -30 left
EOF
    if [[ $errors == 1 ]]; then
        echo "plot $(series "$data" "$styles" "COL:COL1:COL2:xtic(1)" "" 2 3)"
    else
        echo "plot $(series "$data" "$styles" "COL:xtic(1)" "" 2 1)"
    fi
}

plots=$results/plots
mkdir -p "$plots"
# Plots are generated content: a plot whose data is gone must not linger.
rm -f "$plots"/*.png "$plots"/*.svg
count=0
while IFS=$'\t' read -r kind name data _ title xlabel ylabel logx logy ref styles ticks ymin \
    errors yticks mark band; do
    [[ $title != - ]] || title=""
    [[ $xlabel != - ]] || xlabel=""
    [[ $ylabel != - ]] || ylabel=""
    for term in png svg; do
        {
            preamble "$term" "$plots/$name.$term" "$title" "$xlabel" "$ylabel"
            axes "$logx" "$logy" "$ticks" "$ymin" "$yticks" "$mark"
            case $kind in
            lines) template_lines "$data" "$styles" "$ref" "$errors" "$band" ;;
            stacked) template_stacked "$data" "$styles" ;;
            clustered) template_clustered "$data" "$styles" "$errors" ;;
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
