//go:build !nogui

package ui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"
)

// fakeHistory is an in-memory History. Its methods may be called from any
// goroutine.
type fakeHistory struct {
	mu     sync.Mutex
	nextID int64
	chats  []ChatInfo          // newest first; guarded by mu
	msgs   map[int64][]Message // by chat; guarded by mu
	saves  []string            // the content of every SaveReply; guarded by mu
	fail   map[string]error    // method name -> error to return; guarded by mu
	clock  time.Time
}

func newFakeHistory() *fakeHistory {
	return &fakeHistory{msgs: map[int64][]Message{}, fail: map[string]error{},
		clock: time.Date(2026, 1, 2, 9, 0, 0, 0, time.UTC)}
}

func (f *fakeHistory) setFail(method string, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fail[method] = err
}

// touch moves chat id to the top; f.mu held.
func (f *fakeHistory) touch(id int64) {
	i := slices.IndexFunc(f.chats, func(c ChatInfo) bool { return c.ID == id })
	c := f.chats[i]
	f.clock = f.clock.Add(time.Minute)
	c.Updated = f.clock
	f.chats = append([]ChatInfo{c}, slices.Delete(f.chats, i, i+1)...)
}

func (f *fakeHistory) find(id int64) (int, error) {
	i := slices.IndexFunc(f.chats, func(c ChatInfo) bool { return c.ID == id })
	if i < 0 {
		return 0, fmt.Errorf("chat %d: not found", id)
	}
	return i, nil
}

// msg finds message id; f.mu held.
func (f *fakeHistory) msg(id int64) (chat int64, i int, err error) {
	for c, ms := range f.msgs {
		for i, m := range ms {
			if m.ID == id {
				return c, i, nil
			}
		}
	}
	return 0, 0, fmt.Errorf("message %d: not found", id)
}

func (f *fakeHistory) Chats(_ context.Context, query string) ([]ChatInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.fail["Chats"]; err != nil {
		return nil, err
	}
	q := strings.ToLower(strings.TrimSpace(query))
	var out []ChatInfo
	for _, c := range f.chats {
		hit := q == "" || strings.Contains(strings.ToLower(c.Title), q)
		for _, m := range f.msgs[c.ID] {
			hit = hit || strings.Contains(strings.ToLower(m.Content), q)
		}
		if hit {
			out = append(out, c)
		}
	}
	return out, nil
}

func (f *fakeHistory) Load(_ context.Context, id int64) (ChatInfo, []Message, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.fail["Load"]; err != nil {
		return ChatInfo{}, nil, err
	}
	i, err := f.find(id)
	if err != nil {
		return ChatInfo{}, nil, err
	}
	return f.chats[i], slices.Clone(f.msgs[id]), nil
}

func (f *fakeHistory) NewChat(_ context.Context, c ChatInfo) (ChatInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.fail["NewChat"]; err != nil {
		return ChatInfo{}, err
	}
	f.nextID++
	c.ID = f.nextID
	f.chats = append(f.chats, c)
	f.touch(c.ID)
	return f.chats[0], nil
}

func (f *fakeHistory) Rename(_ context.Context, id int64, title string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	i, err := f.find(id)
	if err == nil {
		f.chats[i].Title = title
	}
	return err
}

func (f *fakeHistory) SetSettings(_ context.Context, id int64, prompt string, s Sampling) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.fail["SetSettings"]; err != nil {
		return err
	}
	i, err := f.find(id)
	if err == nil {
		f.chats[i].SystemPrompt, f.chats[i].Sampling = prompt, s
	}
	return err
}

func (f *fakeHistory) Delete(_ context.Context, id int64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	i, err := f.find(id)
	if err == nil {
		f.chats = slices.Delete(f.chats, i, i+1)
		delete(f.msgs, id)
	}
	return err
}

func (f *fakeHistory) add(chat int64, m Message) (int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, err := f.find(chat); err != nil {
		return 0, err
	}
	f.nextID++
	m.ID = f.nextID
	f.msgs[chat] = append(f.msgs[chat], m)
	f.touch(chat)
	return m.ID, nil
}

func (f *fakeHistory) AddMessage(_ context.Context, chat int64, m Message) (int64, error) {
	f.mu.Lock()
	err := f.fail["AddMessage"]
	f.mu.Unlock()
	if err != nil {
		return 0, err
	}
	return f.add(chat, m)
}

func (f *fakeHistory) StartReply(_ context.Context, chat int64) (int64, error) {
	return f.add(chat, Message{Role: RoleAssistant, Interrupted: true})
}

func (f *fakeHistory) SaveReply(_ context.Context, id int64, m Message) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.fail["SaveReply"]; err != nil {
		return err
	}
	c, i, err := f.msg(id)
	if err != nil {
		return err
	}
	f.msgs[c][i].Content, f.msgs[c][i].Reasoning = m.Content, m.Reasoning
	f.saves = append(f.saves, m.Content)
	return nil
}

func (f *fakeHistory) FinishReply(_ context.Context, id int64, m Message, _ Stats, stopped bool) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, i, err := f.msg(id)
	if err != nil {
		return err
	}
	f.msgs[c][i] = Message{Role: RoleAssistant, Content: m.Content, Reasoning: m.Reasoning, ID: id, Interrupted: stopped}
	f.touch(c)
	return nil
}

func (f *fakeHistory) TruncateFrom(_ context.Context, id int64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, i, err := f.msg(id)
	if err == nil {
		f.msgs[c] = f.msgs[c][:i]
	}
	return err
}

func (f *fakeHistory) Export(_ context.Context, id int64, format string, w io.Writer) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, err := f.find(id); err != nil {
		return err
	}
	if format != ExportJSON {
		return errors.New("fake: only json")
	}
	return json.NewEncoder(w).Encode(f.msgs[id])
}

// messages is chat's saved messages, for checks.
func (f *fakeHistory) messages(chat int64) []Message {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.msgs[chat])
}

func (f *fakeHistory) saved() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.saves)
}
