package store

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// crashEnv, when set in the environment, makes TestCrashWriter the writer child of
// TestCrashKill: its value is the database path.
const crashEnv = "EMBER_STORE_CRASH_WRITER"

// crashPiece is the i-th piece of the streamed reply (i from 0): its length
// varies, so pieces end at different places in pages.
func crashPiece(i int) string {
	return fmt.Sprintf("[piece %d %s]", i, strings.Repeat("x", (i*37)%300))
}

// crashReply is the text of pieces 0..n-1.
func crashReply(n int) string {
	var b strings.Builder
	for i := range n {
		b.WriteString(crashPiece(i))
	}
	return b.String()
}

// TestCrashWriter is the child: it saves a conversation with the user's message
// and streams a reply in pieces, printing "conv ID", "reply ID" and "piece N"
// after each is committed, until it is killed.
func TestCrashWriter(t *testing.T) {
	path := os.Getenv(crashEnv)
	if path == "" {
		t.Skip("the writer child of TestCrashKill")
	}
	ctx := context.Background()
	s, err := Open(ctx, path)
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	c, err := s.CreateConversation(ctx, Conversation{Title: "crash"})
	check(err)
	fmt.Println("conv", c.ID)
	_, err = s.AppendMessage(ctx, Message{ConversationID: c.ID, Role: RoleUser, Content: "Tell me a long story"})
	check(err)
	r, err := s.AppendMessage(ctx, Message{ConversationID: c.ID, Role: RoleAssistant, State: StateStreaming})
	check(err)
	fmt.Println("reply", r.ID)
	var text strings.Builder
	for i := 0; ; i++ {
		text.WriteString(crashPiece(i))
		check(s.UpdatePartial(ctx, r.ID, text.String(), ""))
		fmt.Println("piece", i+1)
	}
}

func check(err error) {
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
}

// TestCrashKill kills a writer with SIGKILL at random moments while it streams a
// reply into one database, 50 times. After each kill: every piece the writer
// reported committed is there, earlier runs are intact, PRAGMA integrity_check
// is ok, and the reply reads as interrupted after reopening.
func TestCrashKill(t *testing.T) {
	if os.Getenv(crashEnv) != "" {
		t.Skip("in the child")
	}
	runs := 50
	if testing.Short() {
		runs = 10
	}
	path := filepath.Join(t.TempDir(), "crash.db")
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 1))

	var done []crashRun
	start := time.Now()
	for i := range runs {
		cmd := exec.Command(os.Args[0], "-test.run=^TestCrashWriter$", "-test.count=1")
		cmd.Env = append(os.Environ(), crashEnv+"="+path)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		lines := make(chan string, 1024)
		go func() {
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				lines <- sc.Text()
			}
			close(lines)
		}()

		// Most kills land mid-stream: after the first piece, a random time
		// later (so a slow disk makes fewer pieces, not a slower test); one in
		// five lands during start-up.
		var r crashRun
		if i%5 == 4 {
			time.Sleep(time.Duration(rng.IntN(30_000)) * time.Microsecond)
		} else {
			for line := range lines {
				r.record(t, line)
				if r.pieces >= 1 {
					break
				}
			}
			time.Sleep(time.Duration(rng.IntN(40_000)) * time.Microsecond)
		}
		cmd.Process.Signal(syscall.SIGKILL)
		for line := range lines { // what it printed before dying
			r.record(t, line)
		}
		err = cmd.Wait()
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() {
			t.Fatalf("run %d: the writer ended by itself (%v) before the kill", i, err)
		}

		s, err := Open(context.Background(), path)
		if err != nil {
			t.Fatalf("run %d: reopen after the kill: %v", i, err)
		}
		if err := s.IntegrityCheck(context.Background()); err != nil {
			t.Fatalf("run %d: %v", i, err)
		}
		if r.reply != 0 {
			done = append(done, r)
		}
		for _, d := range done {
			checkRun(t, s, i, d.conv, d.reply, d.pieces)
		}
		s.Close()
	}
	most := 0
	for _, d := range done {
		most = max(most, d.pieces)
	}
	t.Logf("%d kills in %v; %d mid-stream, after up to %d pieces", runs, time.Since(start).Round(time.Millisecond), len(done), most)
}

// crashRun is what a writer child reported before it was killed.
type crashRun struct {
	conv, reply int64
	pieces      int // committed
}

func (r *crashRun) record(t *testing.T, line string) {
	t.Helper()
	k, v, found := strings.Cut(line, " ")
	n, err := strconv.ParseInt(v, 10, 64)
	if !found || err != nil {
		t.Fatalf("writer: %s", line)
	}
	switch k {
	case "conv":
		r.conv = n
	case "reply":
		r.reply = n
	case "piece":
		r.pieces = int(n)
	default:
		t.Fatalf("writer: %s", line)
	}
}

// checkRun checks one killed run's conversation: the question, and a reply in
// state interrupted holding at least the reported pieces, whole.
func checkRun(t *testing.T, s *Store, run int, conv, reply int64, pieces int) {
	t.Helper()
	msgs, err := s.Messages(context.Background(), conv)
	if err != nil || len(msgs) != 2 {
		t.Fatalf("after kill %d: conversation %d has %d messages (%v)", run, conv, len(msgs), err)
	}
	if msgs[0].Content != "Tell me a long story" || msgs[1].ID != reply || msgs[1].State != StateInterrupted {
		t.Fatalf("after kill %d: conversation %d: %+v", run, conv, msgs)
	}
	got := msgs[1].Content
	if !strings.HasPrefix(got, crashReply(pieces)) {
		t.Fatalf("after kill %d: reply %d lost committed pieces: has %d bytes, %d pieces were committed", run, reply, len(got), pieces)
	}
	// At most one piece more than reported (committed, killed before printing), and whole.
	if got != crashReply(pieces) && got != crashReply(pieces+1) {
		t.Fatalf("after kill %d: reply %d is not a whole number of pieces around %d", run, reply, pieces)
	}
}
