"""Planted bugs of the console on the monitoring port (``jsemu/console/``): the message
browser's paging and Direct Get semantics, the live tail's bounded queue and its
subscription, the control actions' refusals, looking without counting, and the hook from
the monitor."""

from __future__ import annotations

from tests.mutation.mutations import Mutation

_API = "tests/console/test_console_api.py"
_BROWSE = "jsemu/console/browse.py"
_TAIL = "jsemu/console/tail.py"
_SITE = "jsemu/console/site.py"

MUTATIONS: list[Mutation] = [
    Mutation(
        "console_next_page_repeats",
        "console",
        _BROWSE,
        '"next_seq": messages[-1].seq + 1 if messages',
        '"next_seq": messages[-1].seq if messages',
        (f"{_API}::test_browser_pages_through_a_stream",),
        "a page's next start is its own last message: paging repeats a message per page",
    ),
    Mutation(
        "console_next_by_subject_ignores_subject",
        "console",
        _BROWSE,
        "        messages = _next_run(store, subject.encode(), seq, batch)\n",
        '        messages = _next_run(store, b">", seq, batch)\n',
        (f"{_API}::test_browser_shows_what_its_direct_get_request_answers",),
        "next by subject reads the next message of any subject",
    ),
    Mutation(
        "console_up_to_time_inclusive",
        "console",
        _BROWSE,
        "            return request, []\n        up_to -= 1\n",
        "            return request, []\n",
        (f"{_API}::test_up_to_time_shows_the_subjects_as_they_were",),
        "up_to_time takes in the message stored at that time, as Direct Get does not",
    ),
    Mutation(
        "console_up_to_seq_ignored",
        "console",
        _BROWSE,
        '    elif up_to:\n        request["up_to_seq"] = up_to\n    if up_to == 0:\n',
        '    elif up_to:\n        request["up_to_seq"] = up_to\n        up_to = 0\n    if up_to == 0:\n',
        (f"{_API}::test_browser_shows_what_its_direct_get_request_answers",),
        "multi_last shows the subjects as they are now, not as they were at up_to_seq",
    ),
    Mutation(
        "console_tail_unbounded",
        "console",
        _TAIL,
        "        if len(self.queue) >= self.max_queued:\n",
        "        if len(self.queue) >= self.max_queued * 1000:\n",
        (f"{_API}::test_a_slow_browser_only_fills_its_own_bounded_queue",),
        "a slow browser's queue grows without bound",
    ),
    Mutation(
        "console_tail_subscription_stays",
        "console",
        _TAIL,
        "            self.sub.closed = True\n            self.sublist.remove(self.sub)\n",
        "            self.sub.closed = True\n",
        (f"{_API}::test_live_tail_sends_each_published_message_as_an_event",),
        "a tail's subscription outlives the browser that left",
    ),
    Mutation(
        "console_tail_kept_past_stop",
        "console",
        "jsemu/app.py",
        "        await self.console.close()  # live tails end, so the monitoring port can close\n",
        "",
        (f"{_API}::test_server_stop_ends_open_tails",),
        "stopping the server leaves live tails running on a closed loop",
    ),
    Mutation(
        "console_control_off_acts",
        "console",
        "jsemu/console/actions.py",
        '        if self.control is None:\n            return {"ok": False, "error": self.off_reason, "request": request}\n',
        "",
        (f"{_API}::test_control_off_says_so_and_changes_nothing",),
        "the console changes the server with the control plane off",
    ),
    Mutation(
        "console_cross_site_post",
        "console",
        _SITE,
        "        refusal = _cross_site(request)\n",
        "        refusal = None\n",
        (f"{_API}::test_control_refuses_forms_other_origins_and_gets",),
        "a form on any web page can freeze the clock of a developer's server",
    ),
    Mutation(
        "console_views_counted",
        "console",
        "jsemu/console/views.py",
        '        response = handler(js, ApiRequest(subject, tokens, None, b"", data))\n',
        '        response = handler(js, ApiRequest(subject, tokens, None, b"", data))\n        js.api_total += 1\n',
        (f"{_API}::test_looking_does_not_count_as_api_requests",),
        "looking at a stream in the console shows up in /jsz as an API request",
    ),
    Mutation(
        "console_kv_delete_shown_as_put",
        "console",
        "jsemu/console/views.py",
        '        if name.strip().lower() == b"kv-operation":\n',
        '        if name.strip() == b"kv-operation":\n',
        (f"{_API}::test_kv_keys_history_and_object_chunks",),
        "a deleted key shows as PUT (the header's name compared case-sensitively)",
    ),
    Mutation(
        "console_home_not_served",
        "console",
        _SITE,
        '        return path in ("/", "") or path == "/console"',
        '        return path == "/console"',
        (f"{_API}::test_home_page_links_the_console_and_the_endpoints",),
        "the monitoring port's / is a 404 with no link to the console",
    ),
    Mutation(
        "console_page_unbounded",
        "console",
        _BROWSE,
        "    batch = max(1, min(asked or 1, MAX_PAGE))\n",
        "    batch = max(1, asked or 1)\n",
        (f"{_API}::test_a_page_reads_at_most_a_page_of_a_big_stream",),
        "a browser asking for a batch of 100,000 makes the event loop read 100,000 messages",
    ),
    Mutation(
        "console_contents_shown_with_auth",
        "console",
        _SITE,
        "            if self.restricted and fn in _CONTENTS:\n",
        "            if False:\n",
        (f"{_API}::test_with_client_authentication_the_console_shows_what_monitoring_shows",),
        "a server that requires a login for clients shows its messages to anyone on the monitoring port",
    ),
    Mutation(
        "console_actions_with_auth",
        "console",
        "jsemu/app.py",
        "restricted=self.options.auth is not None)",
        "restricted=False)",
        (f"{_API}::test_with_client_authentication_the_console_shows_what_monitoring_shows",),
        "the console's unauthenticated HTTP freezes the clock of a server that requires a login",
    ),
    Mutation(
        "console_peer_lag_hidden",
        "console",
        "jsemu/console/views.py",
        '                "lag": replicas.lag(p),\n',
        '                "lag": 0,\n',
        (f"{_API}::test_a_replicated_stream_shows_each_peers_lag_after_a_console_action",),
        "a follower held behind shows no lag on the stream page",
    ),
    Mutation(
        "console_counts_every_subject",
        "console",
        "jsemu/console/views.py",
        "        if not subjects_filter and stream.store.num_subjects <= MAX_SUBJECTS:\n",
        "        if not subjects_filter:\n",
        (f"{_API}::test_a_stream_with_many_subjects_counts_them_when_a_filter_asks",),
        "opening a stream of a million subjects counts them all on the event loop",
    ),
]
