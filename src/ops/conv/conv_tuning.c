/* The conv section of the tuning file: the auto rule of Conv2D dispatch (conv_dispatch.h).
 *   conv.clblast_min_flop = <number>   0 = never CLBlast
 *   conv.clblast_min_k = <int>         K = Ci_g*Kh*Kw at or above which CLBlast may run
 * Both optional; what a file leaves out keeps the built-in value. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/conv/conv_dispatch.h"
#include "tune/tuning_file.h"

int clt__conv_tuning_apply(const clt_context *ctx, const clt__tuning_entries *e, clt__tuning *t,
                           char *why, size_t cap)
{
    clt__conv_rule rule = *clt__conv_rule_builtin(ctx);
    int keys = 0;
    for (int i = 0; i < e->n; i++) {
        const char *k = e->kv[i].key, *v = e->kv[i].value;
        if (strncmp(k, "conv.", 5) != 0)
            continue;
        char *end;
        if (!strcmp(k + 5, "clblast_min_flop")) {
            double d = strtod(v, &end);
            if (end == v || *end || !isfinite(d) || d < 0.0 || d > 1e18) {
                snprintf(why, cap, "%s = %s: want a number in 0 .. 1e18", k, v);
                return -1;
            }
            rule.clblast_min_flop = d;
        } else if (!strcmp(k + 5, "clblast_min_k")) {
            long long n = strtoll(v, &end, 10);
            if (end == v || *end || n < 0 || n > 2147483647LL) {
                snprintf(why, cap, "%s = %s: want an integer in 0 .. 2^31-1", k, v);
                return -1;
            }
            rule.clblast_min_k = n;
        } else {
            snprintf(why, cap, "%s = %s: unknown key (clblast_min_flop, clblast_min_k)", k, v);
            return -1;
        }
        keys++;
    }
    if (keys) {
        rule.label = "tuning file";
        t->conv_rule = rule;
        t->has_conv_rule = 1;
    }
    return 0;
}

int clt__conv_tuning_entries(const clt__conv_rule *r, clt__tuning_entries *e)
{
    char v[64];
    snprintf(v, sizeof v, "%.17g", r->clblast_min_flop);
    if (clt__tuning_set(e, "conv.clblast_min_flop", v) != 0)
        return -1;
    snprintf(v, sizeof v, "%lld", (long long)r->clblast_min_k);
    return clt__tuning_set(e, "conv.clblast_min_k", v);
}
