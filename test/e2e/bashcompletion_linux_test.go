package e2e

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// bashCompletionScript is where Debian's bash-completion package (which the generated
// script needs, as README says) keeps its main script.
const bashCompletionScript = "/usr/share/bash-completion/bash_completion"

// terminal is an interactive bash in a pseudo-terminal: what a person types reaches it
// as keys, and everything it prints (echo, candidate lists) is collected.
type terminal struct {
	t      *testing.T
	master *os.File
	mu     sync.Mutex
	out    bytes.Buffer
}

func startTerminal(t *testing.T, dir string, env []string, args ...string) *terminal {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.IoctlSetPointerInt(int(master.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal("unlockpt:", err)
	}
	n, err := unix.IoctlGetInt(int(master.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal("ptsname:", err)
	}
	if err := unix.IoctlSetWinsize(int(master.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 60, Col: 220}); err != nil {
		t.Fatal(err)
	}
	tty, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir, cmd.Env = dir, env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tty.Close()
	term := &terminal{t: t, master: master}
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := master.Read(buf)
			term.mu.Lock()
			term.out.Write(buf[:n])
			term.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		master.Close()
	})
	return term
}

// send types keys; \t is TAB, \x01 Ctrl-A, \x15 Ctrl-U.
func (term *terminal) send(keys string) {
	term.t.Helper()
	if _, err := term.master.WriteString(keys); err != nil {
		term.t.Fatal(err)
	}
}

// waitFor waits until the terminal has printed want since the last reset.
func (term *terminal) waitFor(what, want string) bool {
	term.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		term.mu.Lock()
		got := term.out.String()
		term.mu.Unlock()
		if strings.Contains(got, want) {
			return true
		}
		time.Sleep(50 * time.Millisecond)
	}
	term.mu.Lock()
	defer term.mu.Unlock()
	term.t.Errorf("%s: the terminal never showed %q; it showed:\n%s", what, want, term.out.String())
	return false
}

func (term *terminal) reset() {
	term.mu.Lock()
	defer term.mu.Unlock()
	term.out.Reset()
}

// TestBashCompletionInTerminal completes in a real interactive bash with bash-completion
// and the shipped completions/kubeevents.bash, keys typed into a pseudo-terminal: type
// lists after a ',' and --sink values with '(' (inside a quote too) once were escaped by
// cobra's script and then matched nothing, and file paths after file= were not offered.
// Each finished command line is run through printf to see the words bash would pass.
func TestBashCompletionInTerminal(t *testing.T) {
	if _, err := os.Stat(bashCompletionScript); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is missing: install bash-completion (apt-get install bash-completion)", bashCompletionScript)
		}
		t.Skipf("%s is missing: install bash-completion to run this test", bashCompletionScript)
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Fatal("bash is needed for this test:", err)
	}
	bin := t.TempDir()
	if err := os.Symlink(binary, filepath.Join(bin, "kubeevents")); err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	for _, f := range []string{"events.jsonl", "other.txt"} {
		if err := os.WriteFile(filepath.Join(work, f), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(work, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	rc := filepath.Join(bin, "bashrc")
	const prompt = "kubeevents-test$ "
	rcText := "PS1='" + prompt + "'\n" +
		". " + bashCompletionScript + "\n" +
		". " + filepath.Join(repoRoot, "completions", "kubeevents.bash") + "\n"
	if err := os.WriteFile(rc, []byte(rcText), 0o600); err != nil {
		t.Fatal(err)
	}
	env := append(cleanEnv(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"),
		"KUBECONFIG="+kubeconfig, "HOME="+t.TempDir(), "TERM=dumb", "INPUTRC=/dev/null")
	term := startTerminal(t, work, env, bash, "--noprofile", "--rcfile", rc, "-i")
	if !term.waitFor("start", prompt) {
		t.FailNow()
	}

	// line types keys, then runs the finished line as printf's arguments, and wants
	// these words.
	line := func(keys string, words ...string) {
		t.Helper()
		term.reset()
		term.send(keys + "\x01printf '<%s>\\n' \r")
		want := "<" + strings.Join(words, ">\r\n<") + ">\r\n"
		term.waitFor(keys, want)
		term.waitFor(keys, prompt)
	}
	// list types keys and two TABs, and wants these candidates listed.
	list := func(keys string, candidates ...string) {
		t.Helper()
		term.reset()
		term.send(keys + "\t\t")
		for _, c := range candidates {
			term.waitFor(keys, c)
		}
		term.send("\x15\r") // an empty line
		term.waitFor(keys, prompt)
	}

	line("kubeevents watch pods,secr\t", "kubeevents", "watch", "pods,secrets")
	list("kubeevents watch pods,s", "pods,secrets", "(Secret (v1))", "pods,services")
	list("kubeevents watch pods --sink 'file(", "file(max-size=", "(rotate the file at this many megabytes)", "file(compress")
	line("kubeevents watch pods --sink 'file(max-s\t5,com\t)=x.jsonl'", "kubeevents", "watch", "pods", "--sink", "file(max-size=5,compress)=x.jsonl")
	line(`kubeevents watch pods --sink file\(form`+"\t"+`json\)=ev`+"\t", "kubeevents", "watch", "pods", "--sink", "file(format=json)=events.jsonl")
	line("kubeevents watch pods --sink file=ev\t", "kubeevents", "watch", "pods", "--sink", "file=events.jsonl")
	list("kubeevents watch pods --sink file=", "events.jsonl", "other.txt", "sub/")
	line("kubeevents watch pods --sink 'file(compress)=s\tx.jsonl'", "kubeevents", "watch", "pods", "--sink", "file(compress)=sub/x.jsonl")
	line("kubeevents watch pods --sink 'jq(output=s\tx.txt)=.type'", "kubeevents", "watch", "pods", "--sink", "jq(output=sub/x.txt)=.type")
}
