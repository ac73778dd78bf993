// Command starter is the sandbox's resident command starter: the Docker
// runner (sandbox/docker) copies it into each container at start, runs it
// once as the command user on an exec whose stream it keeps, and then
// sends each command as a request on that stream instead of making an
// engine exec per command. It does what the per-command wrapper does (see
// docker's wrapScript): it runs `/bin/sh -c SCRIPT` in /workspace with
// its own environment (the exec's), a watchdog that SIGKILLs every
// process of the command user at the time limit, then the same `kill -9
// -1` sweep when the command ends and a wait until they are gone, and
// ends with an exit record. Every frame it writes is authenticated with
// the per-container key the host sent on its stdin (package frame).
//
// Trust: see docs/security-details.md#the-resident-starter. In short it
// makes itself non-dumpable first, so that the command's processes (same
// uid, no capabilities) cannot ptrace it or open its memory or file
// descriptors through /proc; it ignores the catchable signals; and it
// refuses to start a command once its resource limits or priority were
// changed from outside (prlimit, renice), so that the host falls back to
// an engine exec, which gets the container's own.
//
// Build it static: CGO_ENABLED=0 go build -o patchwright-starter ./sandbox/docker/starter
package main

import (
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/patchwright/patchwright/sandbox/docker/frame"
)

func main() {
	// First: until this, another process of the uid could open
	// /proc/PID/mem or fd (none runs yet: the host starts no command
	// before the starter is ready).
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		os.Stderr.WriteString("starter: prctl: " + err.Error() + "\n")
		os.Exit(2)
	}
	signal.Ignore(syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGPIPE,
		syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGTSTP, syscall.SIGTTIN, syscall.SIGTTOU, syscall.SIGALRM)
	if len(os.Args) > 1 {
		os.Remove(os.Args[1]) // the copy of this binary: nothing else needs it
	}
	os.Stdout.WriteString(frame.Hello)
	key := make([]byte, frame.KeySize)
	if _, err := io.ReadFull(os.Stdin, key); err != nil {
		os.Exit(2)
	}
	s := &starter{conn: frame.New(os.Stdin, os.Stdout, key), snap: snapshot()}
	if err := s.send(frame.Ready, nil); err != nil {
		os.Exit(2)
	}
	for {
		typ, p, err := s.conn.Read()
		if err != nil || typ != frame.Request {
			// The host went away (or something not the host wrote):
			// leave nothing running.
			sweep()
			os.Exit(1)
		}
		var req frame.Req
		if json.Unmarshal(p, &req) != nil {
			os.Exit(1)
		}
		if snapshot() != s.snap {
			s.send(frame.Tampered, []byte(snapshot()))
			os.Exit(1)
		}
		s.run(req)
	}
}

type starter struct {
	mu   sync.Mutex
	conn *frame.Conn
	snap string
}

func (s *starter) send(typ byte, p []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.conn.Write(typ, p)
}

// snapshot is what a process of the same uid can change in the starter
// and its children would inherit: resource limits, nice value and CPU
// affinity.
func snapshot() string {
	var b strings.Builder
	for r := 0; r < 16; r++ {
		var l unix.Rlimit
		if unix.Getrlimit(r, &l) == nil {
			b.WriteString(strconv.FormatUint(l.Cur, 10) + "/" + strconv.FormatUint(l.Max, 10) + " ")
		}
	}
	if p, err := unix.Getpriority(unix.PRIO_PROCESS, 0); err == nil {
		b.WriteString("nice " + strconv.Itoa(p) + " ")
	}
	var set unix.CPUSet
	if unix.SchedGetaffinity(0, &set) == nil {
		b.WriteString("cpus " + strconv.Itoa(set.Count()))
	}
	return b.String()
}

// run runs one command and writes its output and exit record.
func (s *starter) run(req frame.Req) {
	rec := frame.Record{OOMBefore: oomCount(), Code: 127}
	outR, outW, err1 := os.Pipe()
	errR, errW, err2 := os.Pipe()
	if err := errors.Join(err1, err2); err != nil {
		s.record(rec)
		return
	}
	cmd := exec.Command("/bin/sh", "-c", req.Script)
	cmd.Dir = "/workspace"
	cmd.Stdout, cmd.Stderr = outW, errW
	// Its own session: its `kill 0` or a signal to its group does not
	// reach the starter (its `kill -9 -1` does: same uid).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	var copies sync.WaitGroup
	relay := func(r *os.File, typ byte) {
		defer copies.Done()
		defer r.Close()
		buf := make([]byte, 64<<10)
		for {
			n, err := r.Read(buf)
			if n > 0 && s.send(typ, buf[:n]) != nil {
				os.Exit(1)
			}
			if err != nil {
				return
			}
		}
	}
	err := cmd.Start()
	outW.Close()
	errW.Close()
	copies.Add(2)
	go relay(outR, frame.Stdout)
	go relay(errR, frame.Stderr)
	if err != nil {
		s.send(frame.Stderr, []byte("/bin/sh: "+err.Error()+"\n"))
	} else {
		watchdog := time.AfterFunc(time.Duration(req.TimeoutNS), func() { syscall.Kill(-1, syscall.SIGKILL) })
		err = cmd.Wait()
		watchdog.Stop()
		rec.Code = status(cmd, err)
	}
	rec.Clean = sweep()
	copies.Wait() // every writer of the pipes is gone now
	rec.OOMAfter = oomCount()
	s.record(rec)
}

func (s *starter) record(rec frame.Record) {
	p, _ := json.Marshal(rec)
	if s.send(frame.Exit, p) != nil {
		os.Exit(1)
	}
}

// status is the shell's $? for the command's end: 128+signal if killed.
func status(cmd *exec.Cmd, err error) int {
	if cmd.ProcessState == nil {
		return 127
	}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return cmd.ProcessState.ExitCode()
}

// sweep SIGKILLs every other process of this uid (kill(-1) is atomic
// against fork) and waits until /proc lists none: a zombie stays until
// PID 1 reaps it. It reports whether they were all gone.
func sweep() bool {
	self, uid := os.Getpid(), os.Getuid()
	for range 10000 {
		syscall.Kill(-1, syscall.SIGKILL)
		if !othersLeft(self, uid) {
			return true
		}
		time.Sleep(100 * time.Microsecond)
	}
	return false
}

func othersLeft(self, uid int) bool {
	d, err := os.Open("/proc")
	if err != nil {
		return true
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return true
	}
	for _, n := range names {
		pid, err := strconv.Atoi(n)
		if err != nil || pid == self {
			continue
		}
		var st unix.Stat_t
		if unix.Stat("/proc/"+n, &st) == nil && int(st.Uid) == uid {
			return true
		}
	}
	return false
}

// oomCount is the cgroup's OOM kill count, "" where unreadable.
func oomCount() string {
	for _, f := range []string{"/sys/fs/cgroup/memory.events", "/sys/fs/cgroup/memory/memory.oom_control"} {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(data), "\n") {
			if v, ok := strings.CutPrefix(line, "oom_kill "); ok {
				return strings.TrimSpace(v)
			}
		}
	}
	return ""
}
