# The perl workload of the disambiguation benchmark: hashes, sorting, regexes, recursion.
use strict; use warnings; no warnings 'recursion';
sub ack { my ($m, $n) = @_; return $n + 1 if $m == 0; return ack($m - 1, 1) if $n == 0; return ack($m - 1, ack($m, $n - 1)); }
my %count;
for my $i (1 .. 20000) { my $w = join '', map { chr(97 + int($i / 26 ** $_) % 26) } 0 .. 3; $count{$w} += $i % 7; }
my @keys = sort { $count{$b} <=> $count{$a} || $a cmp $b } keys %count;
my $text = join ' ', map { "$_=$count{$_}" } @keys;
my $hits = 0;
$hits++ while $text =~ /\b([a-f]+)=(\d+)/g;
(my $swapped = $text) =~ s/(\w+)=(\d+)/$2:$1/g;
my @parts = split /\s+/, $swapped;
my %rev = reverse %count;
printf "%d %d %d %d %d\n", scalar(@keys), $hits, scalar(@parts), ack(2, 300), scalar(keys %rev);
