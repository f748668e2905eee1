package app

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
)

// DefaultDataDir is where Ember keeps its conversation database (and other data it
// makes): $XDG_DATA_HOME/ember or ~/.local/share/ember on Linux and the BSDs,
// ~/Library/Application Support/ember on macOS, %AppData%\ember on Windows.
func DefaultDataDir() (string, error) {
	switch runtime.GOOS {
	case "darwin", "windows", "ios", "android", "plan9", "js", "wasip1":
		dir, err := os.UserConfigDir()
		if err != nil {
			return "", fmt.Errorf("data folder: %w", err)
		}
		return filepath.Join(dir, "ember"), nil
	}
	if x := os.Getenv("XDG_DATA_HOME"); filepath.IsAbs(x) {
		return filepath.Join(x, "ember"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("data folder: %w", err)
	}
	return filepath.Join(home, ".local", "share", "ember"), nil
}

// HistoryFile is the conversation database's name in the data folder.
const HistoryFile = "ember.db"
