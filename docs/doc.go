// Package docs holds no code: its tests keep the documentation in this
// directory and the README true to the code (settings, ledger events,
// commands, subscribed events, detected ecosystems, the test command and
// the JSON Schemas).
package docs
