# known-splats.awk: copy a kernel log, with each splat of a known defect
# outside fairq replaced by one line saying so (the rest of vm/kpattern's
# scan then never sees it).  A splat is the block from "[ cut here ]" to
# "[ end trace"; one that never ends is copied as it is.  Used by vm/init
# (each test's kernel log) and vm/run (the console); busybox awk too.
#
# Known defects, each matched by its message and the first frame of its
# call trace, and each reproduced without fairq loaded:
#
#   null_blk's bandwidth throttle (mbps=N, tests 040, 090, 260): two
#   CPUs submitting at once when its timer is idle both see it inactive
#   (hrtimer_active()) and both restart it; the second restart re-queues
#   the timer while its callback already runs, and the callback's
#   hrtimer_forward_now() warns.  Seen in CI on Debian's 6.12 in 040;
#   reproduced on raw null_blk mbps=4, no fairq module loaded, after 68
#   short fio runs of two jobs pinned to the two CPUs (Dec 2026).
#   Signature: "WARNING: ... hrtimer_forward" whose trace starts with
#   nullb_bwtimer_fn.

function known(   i, frame) {
	if (block !~ /WARNING: [^\n]* at kernel\/time\/hrtimer\.c:[0-9]+ hrtimer_forward/)
		return ""
	frame = ""
	for (i = 1; i <= n; i++) {
		if (line[i] ~ /Call Trace:/) {
			frame = "trace"
			continue
		}
		if (frame != "trace" || line[i] ~ /<IRQ>|<TASK>| \? /)
			continue
		frame = line[i]
		break
	}
	if (frame ~ /nullb_bwtimer_fn\+/)
		return "null_blk's throttle timer race (WARNING in hrtimer_forward from nullb_bwtimer_fn)"
	return ""
}

function flush(   i) {
	for (i = 1; i <= n; i++)
		print line[i]
	n = 0
	block = ""
}

/\[ cut here \]/ {
	flush()
	inside = 1
}

inside {
	line[++n] = $0
	block = block $0 "\n"
	if ($0 ~ /\[ end trace/) {
		why = known()
		if (why != "") {
			print "fairq-vm: known defect outside fairq, not counted: " why
			n = 0
			block = ""
		} else {
			flush()
		}
		inside = 0
	}
	next
}

{ print }

END { flush() }
