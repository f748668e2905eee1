//go:build !nogui

package app

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/driver/software"

	"ember/store"
	"ember/ui"
)

// guiChildEnv, when set, makes the test binary the child of TestGUIEndToEnd: it
// runs the real app on the main goroutine (as GLFW wants) in the data folder
// named by the value, sends a message, saves a PNG of the window there and quits.
const guiChildEnv = "EMBER_GUI_CHILD_DATA"

// guiPrompt is what the child sends to the bundled story model.
const guiPrompt = "Once upon a time"

func TestMain(m *testing.M) {
	if dir := os.Getenv(guiChildEnv); dir != "" {
		os.Exit(guiChild(dir))
	}
	os.Exit(m.Run())
}

func guiChild(dir string) int {
	code := 1
	err := RunGUI(context.Background(), GUIOptions{Backend: "auto", DataDir: dir, script: func(c *ui.Control) {
		defer c.Close()
		c.Send(guiPrompt)
		if !c.WaitIdle(90 * time.Second) {
			fmt.Println("the reply did not finish")
			return
		}
		time.Sleep(300 * time.Millisecond) // a frame or two
		img := c.Capture()
		if colours(img) < 2 {
			// Mesa's software GL under Xvfb reads an empty front buffer: draw the
			// window's widgets with Fyne's software painter instead.
			c.Do(func(w fyne.Window) { img = softwareCapture(w) })
			fmt.Println("capture: software")
		}
		if err := writePNGFile(filepath.Join(dir, "window.png"), img); err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("chats %q\n", c.Chats())
		fmt.Printf("transcript %q\n", c.Transcript())
		code = 0
	}})
	if err != nil {
		fmt.Println(err)
		return 1
	}
	return code
}

// softwareCapture draws the content of w with Fyne's software painter, then
// gives it back to w. Fyne goroutine.
func softwareCapture(w fyne.Window) image.Image {
	content, size := w.Content(), w.Canvas().Size()
	c := software.NewCanvas()
	c.SetPadded(w.Padded())
	c.SetContent(content)
	c.Resize(size)
	img := c.Capture()
	w.SetContent(content)
	return img
}

func writePNGFile(path string, img image.Image) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := png.Encode(f, img); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// TestGUIEndToEnd launches the real app (engine, bundled model, conversation
// database) under Xvfb, sends a message, and checks the streamed reply on the
// screen, in a PNG of the window and in the database. EMBER_GUI_PNG=path keeps a
// copy of the PNG to look at.
func TestGUIEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the app under Xvfb")
	}
	xvfb, err := exec.LookPath("xvfb-run")
	if err != nil {
		t.Skip("xvfb-run not installed (build/deps.sh --test installs it)")
	}
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, xvfb, "-a", "-s", "-screen 0 1280x900x24",
		os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), guiChildEnv+"="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		if bytes.Contains(out, []byte("GLX")) || bytes.Contains(out, []byte("VersionUnavailable")) || bytes.Contains(out, []byte("APIUnavailable")) {
			t.Skipf("no OpenGL under Xvfb here (Mesa's software GL, libgl1-mesa-dri, is needed):\n%s", out)
		}
		t.Fatalf("the app: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "transcript ") {
		t.Fatalf("the app did not report:\n%s", out)
	}

	// The window shows the reply: a PNG with plenty of ink.
	f, err := os.Open(filepath.Join(dir, "window.png"))
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	if keep := os.Getenv("EMBER_GUI_PNG"); keep != "" {
		if err := writePNGFile(keep, img); err != nil {
			t.Error(err)
		}
	}
	if b := img.Bounds(); b.Dx() < 400 || b.Dy() < 300 {
		t.Errorf("window picture %v", b)
	}
	if n := colours(img); n < 8 {
		t.Errorf("the window picture has %d colours: blank?", n)
	}

	// The conversation is saved, its reply complete.
	st, err := store.Open(context.Background(), filepath.Join(dir, HistoryFile))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	convs, err := st.ListConversations(context.Background())
	if err != nil || len(convs) != 1 || convs[0].Title != guiPrompt {
		t.Fatalf("conversations %+v, %v\n%s", convs, err, out)
	}
	msgs, err := st.Messages(context.Background(), convs[0].ID)
	if err != nil || len(msgs) != 2 {
		t.Fatalf("messages %+v, %v", msgs, err)
	}
	if msgs[0].Content != guiPrompt || msgs[1].State != store.StateComplete || len(msgs[1].Content) < 10 || msgs[1].GenTokens == 0 {
		t.Errorf("saved %+v", msgs)
	}
	if !strings.Contains(string(out), msgs[1].Content[:10]) {
		t.Errorf("the screen did not show the saved reply %q:\n%s", msgs[1].Content, out)
	}
}

// colours counts the distinct colours of img, up to 1000.
func colours(img image.Image) int {
	seen := map[[4]uint32]bool{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y && len(seen) < 1000; y += 2 {
		for x := b.Min.X; x < b.Max.X; x += 2 {
			r, g, bb, a := img.At(x, y).RGBA()
			seen[[4]uint32{r, g, bb, a}] = true
		}
	}
	return len(seen)
}

// TestNoDisplayServes: without a display the app serves the API instead.
func TestNoDisplayServes(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("X11/Wayland session variables")
	}
	t.Setenv("DISPLAY", "")
	t.Setenv("WAYLAND_DISPLAY", "")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var addr string
	err := RunGUI(ctx, GUIOptions{Backend: "ref", DataDir: t.TempDir(), serveAddr: "127.0.0.1:0", ready: func(a string) {
		addr = a
		cancel()
	}})
	if err != nil || addr == "" {
		t.Errorf("RunGUI = %v, served at %q", err, addr)
	}
}
