package budget

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/redis/go-redis/v9"

	"github.com/patchwright/patchwright/jobs"
	"github.com/patchwright/patchwright/jobs/tasks"
)

// A run holds a reservation of its estimated cap from the month's budgets
// while it runs, so concurrent runs (or a run whose worker dies) cannot
// spend past a monthly cap between the check and the count: Reserve checks
// and holds in one Redis script, Settle swaps the hold for the real cost.
// A reservation is a field (the task's ID) of a hash per scope and month;
// a record per task names the month, so a settlement in the next month
// still finds it.

func reservedKey(spendKey string) string { return spendKey + ":reserved" }

func recordKey(task string) string { return jobs.KeyPrefix + "spend:reservation:" + task }

// reserveScript checks both scopes and holds ARGV[2] under task ARGV[1].
// KEYS: installation spend, installation holds, repository spend,
// repository holds, the task's record. ARGV: task, usd, installation cap,
// repository cap, month, TTL seconds. A hold the same task left (an
// attempt whose worker died before asynq ran it again) is first settled
// at its amount: what that attempt spent is unknown, its cap bounds it.
// It answers {} when held, else {scope index, spent, reserved}.
var reserveScript = redis.NewScript(`
local usd = tonumber(ARGV[2])
for i = 0, 1 do
  local old = redis.call('HGET', KEYS[2 + 2*i], ARGV[1])
  if old then
    redis.call('INCRBYFLOAT', KEYS[1 + 2*i], old)
    redis.call('HDEL', KEYS[2 + 2*i], ARGV[1])
  end
end
for i = 0, 1 do
  local cap = tonumber(ARGV[3 + i])
  if cap > 0 then
    local spent = tonumber(redis.call('GET', KEYS[1 + 2*i]) or '0')
    local held = 0
    for _, v in ipairs(redis.call('HVALS', KEYS[2 + 2*i])) do held = held + tonumber(v) end
    if spent + held >= cap or (usd > 0 and spent + held + usd > cap) then
      return {i, tostring(spent), tostring(held)}
    end
  end
end
for i = 0, 1 do
  redis.call('HSET', KEYS[2 + 2*i], ARGV[1], ARGV[2])
  redis.call('EXPIRE', KEYS[2 + 2*i], ARGV[6])
  redis.call('EXPIRE', KEYS[1 + 2*i], ARGV[6])
end
redis.call('SET', KEYS[5], ARGV[5], 'EX', ARGV[6])
return {}
`)

// Reserve holds usd (the run's estimated cap, zero when it has none) of
// the issue's monthly budgets for task until Settle. It returns a
// *Refusal when a cap is spent, or would be by this run on top of the
// spend and the holds of runs still going. Without caps it holds nothing.
func (s *Store) Reserve(ctx context.Context, issue tasks.Issue, task string, usd float64) error {
	if s.Caps.Installation <= 0 && s.Caps.Repository <= 0 {
		return nil
	}
	if task == "" || usd < 0 {
		return fmt.Errorf("reserve a budget for %s: a task and a non-negative amount are required", issue)
	}
	now := s.now()
	m := month(now)
	inst, repo := installationKey(m, issue.InstallationID), repositoryKey(m, issue)
	keys := []string{inst, reservedKey(inst), repo, reservedKey(repo), recordKey(task)}
	res, err := reserveScript.Run(ctx, s.Redis, keys, task, usd, s.Caps.Installation, s.Caps.Repository, m, int(keyTTL.Seconds())).Slice()
	if err != nil {
		return fmt.Errorf("reserve the budget of %s: %w", issue, err)
	}
	if len(res) == 0 {
		return nil
	}
	scope, caps := "installation", s.Caps.Installation
	if n, _ := res[0].(int64); n == 1 {
		scope, caps = "repository", s.Caps.Repository
	}
	spent, _ := strconv.ParseFloat(fmt.Sprint(res[1]), 64)
	held, _ := strconv.ParseFloat(fmt.Sprint(res[2]), 64)
	return &Refusal{Scope: scope, CapUSD: caps, SpentUSD: spent, ReservedUSD: held, RunCapUSD: usd,
		Month: m, ResetsAt: nextMonth(now)}
}

// settleScript replaces task's holds with the cost ARGV[2] ("" settles at
// the hold). KEYS as reserveScript's. It answers the amount counted, or
// false when task holds nothing (settled already).
var settleScript = redis.NewScript(`
local old = redis.call('HGET', KEYS[2], ARGV[1])
if not old then old = redis.call('HGET', KEYS[4], ARGV[1]) end
if not old then return false end
local usd = ARGV[2]
if usd == '' then usd = old end
for i = 0, 1 do
  redis.call('HDEL', KEYS[2 + 2*i], ARGV[1])
  if tonumber(usd) > 0 then
    redis.call('INCRBYFLOAT', KEYS[1 + 2*i], usd)
    redis.call('EXPIRE', KEYS[1 + 2*i], ARGV[3])
  end
end
redis.call('DEL', KEYS[5])
return usd
`)

// Settle counts what task's run cost in place of its hold, in the month
// it reserved. A task that holds nothing (no caps, or settled already) is
// counted as Add counts.
func (s *Store) Settle(ctx context.Context, issue tasks.Issue, task string, usd float64) error {
	if usd < 0 {
		usd = 0
	}
	ok, err := s.settle(ctx, issue, task, strconv.FormatFloat(usd, 'f', -1, 64))
	if err != nil || ok {
		return err
	}
	return s.Add(ctx, issue, usd)
}

// SettleAbandoned settles the hold of a task whose worker died (the
// sweeper's case) at its amount: the run's cost is unknown, and its cap
// bounds it. A task that holds nothing is left as it is.
func (s *Store) SettleAbandoned(ctx context.Context, issue tasks.Issue, task string) error {
	_, err := s.settle(ctx, issue, task, "")
	return err
}

func (s *Store) settle(ctx context.Context, issue tasks.Issue, task, usd string) (bool, error) {
	if task == "" {
		return false, nil
	}
	m, err := s.Redis.Get(ctx, recordKey(task)).Result()
	if errors.Is(err, redis.Nil) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("find the budget reservation of %s: %w", issue, err)
	}
	inst, repo := installationKey(m, issue.InstallationID), repositoryKey(m, issue)
	keys := []string{inst, reservedKey(inst), repo, reservedKey(repo), recordKey(task)}
	err = settleScript.Run(ctx, s.Redis, keys, task, usd, int(keyTTL.Seconds())).Err()
	if errors.Is(err, redis.Nil) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("settle the budget of %s: %w", issue, err)
	}
	return true, nil
}

// Reserved is what runs still going hold of the month's budgets of the
// issue's installation and repository.
func (s *Store) Reserved(ctx context.Context, issue tasks.Issue) (installation, repository float64, err error) {
	m := month(s.now())
	sum := func(key string) (float64, error) {
		vals, err := s.Redis.HVals(ctx, reservedKey(key)).Result()
		total := 0.0
		for _, v := range vals {
			x, _ := strconv.ParseFloat(v, 64)
			total += x
		}
		return total, err
	}
	if installation, err = sum(installationKey(m, issue.InstallationID)); err != nil {
		return 0, 0, fmt.Errorf("read the month's holds of %s: %w", issue, err)
	}
	if repository, err = sum(repositoryKey(m, issue)); err != nil {
		return 0, 0, fmt.Errorf("read the month's holds of %s: %w", issue, err)
	}
	return installation, repository, nil
}
