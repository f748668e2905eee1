// Package ui is Ember's desktop interface: the Fyne chat window and its widgets.
//
// It declares the ChatService and the History (saved conversations) it needs
// and imports only assets, Fyne and the standard library, never the engine or
// the store; package app adapts the engine to ChatService and the store to
// History, and calls Run.
//
// Everything but this file is built only without the nogui tag, so a server
// build (go build -tags nogui) links neither GL nor X11.
package ui
