# The Tcl workload of the disambiguation benchmark: procs, recursion, lists, dicts, regexps.
proc ack {m n} {
    if {$m == 0} { return [expr {$n + 1}] }
    if {$n == 0} { return [ack [expr {$m - 1}] 1] }
    return [ack [expr {$m - 1}] [ack $m [expr {$n - 1}]]]
}
proc fib {n} { expr {$n < 2 ? $n : [fib [expr {$n - 1}]] + [fib [expr {$n - 2}]]} }
set count [dict create]
for {set i 1} {$i <= 20000} {incr i} {
    set w ""
    foreach k {0 1 2 3} { append w [format %c [expr {97 + ($i / int(pow(26, $k))) % 26}]] }
    dict incr count $w [expr {$i % 7}]
}
set keys [lsort -command {apply {{a b} {
    upvar 1 count c
    set d [expr {[dict get $c $b] - [dict get $c $a]}]
    expr {$d != 0 ? $d : [string compare $a $b]}
}}} [dict keys $count]]
set text [join [lmap k $keys {string cat $k = [dict get $count $k]}] " "]
set hits [llength [regexp -all -inline {\m[a-f]+=\d+} $text]]
regsub -all {(\w+)=(\d+)} $text {\2:\1} swapped
set parts [split $swapped " "]
set chan [open [info script] r]
set lines [llength [split [read $chan] "\n"]]
close $chan
puts "[llength $keys] $hits [llength $parts] [ack 2 200] [fib 18] $lines"
