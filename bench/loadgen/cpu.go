package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"
)

// cpuSample is what the CPU accounting reads at one edge of the measured
// window: the server's CPU time (from /proc/PID/stat), loadgen's own (from
// getrusage) and the machine's idle and total time (from /proc/stat).
type cpuSample struct {
	server, client time.Duration
	idle, total    uint64 // clock ticks, all CPUs
}

// clockTick is the unit of /proc's times: USER_HZ, 100 on every Linux
// architecture Go supports (the kernel converts to it for userspace).
const clockTick = 10 * time.Millisecond

// sampleCPU reads the CPU times; pid 0 leaves the server's at zero.
func sampleCPU(pid int) (cpuSample, error) {
	var s cpuSample
	var err error
	if s.client, err = selfCPU(); err != nil {
		return s, err
	}
	if pid > 0 {
		ticks, err := procCPU(pid)
		if err != nil {
			return s, err
		}
		s.server = time.Duration(ticks) * clockTick
	}
	s.idle, s.total, err = machineCPU()
	return s, err
}

// procCPU returns utime+stime of process pid, in clock ticks.
func procCPU(pid int) (uint64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	// The command name (field 2) is in parentheses and may hold spaces:
	// count fields from the last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, errors.New("/proc/PID/stat: no ')'")
	}
	f := bytes.Fields(b[i+1:])
	// f[0] is field 3 (state); utime and stime are fields 14 and 15.
	if len(f) < 13 {
		return 0, errors.New("/proc/PID/stat: too few fields")
	}
	u, err1 := strconv.ParseUint(string(f[11]), 10, 64)
	st, err2 := strconv.ParseUint(string(f[12]), 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, fmt.Errorf("/proc/PID/stat: %w", err)
	}
	return u + st, nil
}

// machineCPU returns the idle (idle + iowait) and total ticks of all CPUs
// from the first line of /proc/stat.
func machineCPU() (idle, total uint64, err error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0, err
	}
	line, _, _ := bytes.Cut(b, []byte("\n"))
	f := bytes.Fields(line)
	if len(f) < 6 || string(f[0]) != "cpu" {
		return 0, 0, errors.New("/proc/stat: no cpu line")
	}
	for i, x := range f[1:] {
		v, err := strconv.ParseUint(string(x), 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("/proc/stat: %w", err)
		}
		total += v
		if i == 3 || i == 4 { // idle, iowait
			idle += v
		}
	}
	return idle, total, nil
}

// cpuReport fills rep's CPU figures from samples at the window's start and
// end, for n decisions.
func cpuReport(rep *report, a, b cpuSample, n int64, server bool) {
	if n <= 0 {
		return
	}
	per := func(d time.Duration) float64 { return us(d) / float64(n) }
	if server {
		rep.ServerCPUUS = per(b.server - a.server)
	}
	rep.ClientCPUUS = per(b.client - a.client)
	if dt := b.total - a.total; dt > 0 {
		rep.IdlePct = 100 * float64(b.idle-a.idle) / float64(dt)
	}
}
