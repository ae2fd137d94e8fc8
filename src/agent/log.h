/* SPDX-License-Identifier: MIT */
/*
 * How the agent's modules report what they do: modules never print, they
 * hand one finished line (no prefix, no newline) to the caller's
 * callback, and `domprof agent` (cmd-agent.c) prints it. A NULL callback
 * drops the line (unit tests that do not care).
 */
#ifndef DOMPROF_AGENT_LOG_H
#define DOMPROF_AGENT_LOG_H

#include <stdarg.h>
#include <stdio.h>

struct agent_log {
	void (*line)(void *ctx, const char *text); /* text is valid for the call only */
	void *ctx;
};

static inline void agent_logf(const struct agent_log *log, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static inline void agent_logf(const struct agent_log *log, const char *fmt, ...)
{
	if (!log || !log->line)
		return;
	char text[8192];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	log->line(log->ctx, text);
}

#endif
