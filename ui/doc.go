// Package ui is Ember's desktop interface: the Fyne chat window and its widgets.
//
// It declares the ChatService it needs and imports only assets, Fyne and the
// standard library, never the engine; package app adapts the engine to
// ChatService and calls Run.
//
// Everything but this file is built only without the nogui tag, so a server
// build (go build -tags nogui) links neither GL nor X11.
package ui
