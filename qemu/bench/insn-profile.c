// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * insn-profile: a QEMU TCG plugin that counts the guest instructions
 * executed at every guest virtual address, for qemu/bench/insn-profile.py to
 * charge them to the kernel's functions (System.map).
 *
 * Each translated instruction gets an inline "add 1" to a counter owned by
 * its address, so the counts are exact per instruction (a block left early
 * by an exception counts only what ran), like tests/plugin/insn.c's inline
 * mode. Counters are plain u64s: run QEMU with -icount (one TCG thread for
 * all vCPUs), as scripts/bench.sh does, or the adds race.
 *
 * At exit it writes "insns: TOTAL" and then one "VADDR COUNT" line (hex
 * address, decimal count) per address that ran, to QEMU's log
 * (-d plugin -D FILE).
 *
 * Built by qemu/bench/build-insn-plugin.sh against the installed QEMU's
 * qemu-plugin.h.
 */
#include <inttypes.h>
#include <stdio.h>

#include <glib.h>
#include <qemu-plugin.h>

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

/* Guest address -> its uint64_t counter; counters are never freed. */
static GHashTable *counters;
static GMutex counters_lock;

static uint64_t *counter_of(uint64_t vaddr)
{
	uint64_t *count;

	g_mutex_lock(&counters_lock);
	count = g_hash_table_lookup(counters, &vaddr);
	if (!count) {
		uint64_t *key = g_new(uint64_t, 1);

		*key = vaddr;
		count = g_new0(uint64_t, 1);
		g_hash_table_insert(counters, key, count);
	}
	g_mutex_unlock(&counters_lock);
	return count;
}

static void profile_tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t n = qemu_plugin_tb_n_insns(tb);

	for (size_t i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);

		qemu_plugin_register_vcpu_insn_exec_inline(
			insn, QEMU_PLUGIN_INLINE_ADD_U64,
			counter_of(qemu_plugin_insn_vaddr(insn)), 1);
	}
}

static void profile_exit(qemu_plugin_id_t id, void *unused)
{
	GString *out = g_string_new(NULL);
	g_autofree gchar *head = NULL;
	GHashTableIter iter;
	gpointer key, value;
	uint64_t total = 0;

	g_hash_table_iter_init(&iter, counters);
	while (g_hash_table_iter_next(&iter, &key, &value)) {
		uint64_t count = *(uint64_t *)value;

		if (!count)
			continue;
		total += count;
		g_string_append_printf(out, "%" PRIx64 " %" PRIu64 "\n",
				       *(uint64_t *)key, count);
	}
	head = g_strdup_printf("insns: %" PRIu64 "\n", total);
	g_string_prepend(out, head);
	qemu_plugin_outs(out->str);
	g_string_free(out, TRUE);
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id,
					   const qemu_info_t *info,
					   int argc, char **argv)
{
	if (argc) {
		fprintf(stderr, "insn-profile: takes no options (got %s)\n",
			argv[0]);
		return -1;
	}
	counters = g_hash_table_new(g_int64_hash, g_int64_equal);
	qemu_plugin_register_vcpu_tb_trans_cb(id, profile_tb_trans);
	qemu_plugin_register_atexit_cb(id, profile_exit, NULL);
	return 0;
}
