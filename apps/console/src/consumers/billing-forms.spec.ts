import {
  BILLING_ERRORS,
  alertsText,
  anchorText,
  parseAlerts,
  parseAnchor,
  parseBalance,
  parseCosts,
  parseQuota,
  parseRefill,
  parseTopUp,
} from './billing-forms';

describe('billing forms of the consumer page', () => {
  it('reads an anchor typed as UTC date and time, and empty as back to the creation time', () => {
    expect(parseAnchor('2026-01-31 09:00')).toEqual({ body: { billingAnchor: '2026-01-31T09:00:00Z' } });
    expect(parseAnchor('2026-01-31T09:00:15Z')).toEqual({ body: { billingAnchor: '2026-01-31T09:00:15Z' } });
    expect(parseAnchor('2026-01-31 09:00 UTC')).toEqual({ body: { billingAnchor: '2026-01-31T09:00:00Z' } });
    expect(parseAnchor('')).toEqual({ body: { billingAnchor: null } });
  });

  it('refuses an anchor that is not a UTC date and time, or a day the month does not have', () => {
    for (const text of [
      '31/01/2026',
      '2026-01-31',
      '2026-02-31 09:00',
      '2026-01-31 25:00',
      '2026-01-31 09:00+02:00',
      '0000-01-31 09:00',
      '2026-W05-6 09:00',
    ])
      expect([text, 'error' in parseAnchor(text)]).toEqual([text, true]);
  });

  it('shows an anchor as it is typed, seconds only when it has some', () => {
    expect(anchorText('2026-01-31T09:00:00.000Z')).toBe('2026-01-31 09:00');
    expect(anchorText('2026-01-31T09:00:15.000Z')).toBe('2026-01-31 09:00:15');
  });

  it('reads whole numbers with separators; empty means the plan’s or no credits', () => {
    expect(parseQuota('7,000')).toEqual({ body: { perMonth: 7000 } });
    expect(parseQuota('')).toEqual({ body: { perMonth: null } });
    expect('error' in parseQuota('0')).toBe(true);
    expect('error' in parseQuota('1.5')).toBe(true);
    expect(parseTopUp({ amount: '1 000', reason: 'Invoice 42' })).toEqual({
      body: { amount: 1000, reason: 'Invoice 42' },
    });
    expect('error' in parseTopUp({ amount: '0', reason: 'x' })).toBe(true);
    expect('error' in parseTopUp({ amount: '5', reason: ' ' })).toBe(true);
    expect(parseBalance({ balance: '', reason: 'Contract ended' })).toEqual({
      body: { balance: null, reason: 'Contract ended' },
    });
    expect(parseBalance({ balance: '0', reason: 'Reset' })).toEqual({ body: { balance: 0, reason: 'Reset' } });
  });

  it('refuses a reason with control characters with its own sentence, before the admin API is asked', () => {
    for (const reason of ['Invoice\u000042', 'Invoice\n42', 'Invoice\t42', 'Invoice\u007f'])
      expect(parseTopUp({ amount: '5', reason })).toEqual({ error: BILLING_ERRORS.reasonText });
    expect(parseBalance({ balance: '5', reason: 'a\u001bb' })).toEqual({ error: BILLING_ERRORS.reasonText });
    expect(parseTopUp({ amount: '5', reason: 'Überweisung – 42 €' })).toEqual({
      body: { amount: 5, reason: 'Überweisung – 42 €' },
    });
  });

  it('reads a refill (both or neither) and costs per operation (or the plan’s)', () => {
    expect(parseRefill({ amount: '1000', every: 'day' })).toEqual({
      body: { creditRefill: { amount: 1000, every: 'day' } },
    });
    expect(parseRefill({ amount: '', every: '' })).toEqual({ body: { creditRefill: null } });
    expect('error' in parseRefill({ amount: '1000', every: '' })).toBe(true);
    expect(parseCosts({ 'cost-listPets': '1', 'cost-createPet': '5' }, ['createPet', 'listPets'])).toEqual({
      body: { costs: { createPet: 5, listPets: 1 } },
    });
    expect(parseCosts({ reset: 'plan' }, ['listPets'])).toEqual({ body: { costs: null } });
    expect('error' in parseCosts({ 'cost-listPets': '-1' }, ['listPets'])).toBe(true);
  });
});

describe('the alert thresholds form', () => {
  it('reads percents and a low balance, a side left empty being the plan’s, both empty null', () => {
    expect(parseAlerts({ thresholdsPercent: '50, 90,100', creditsLowBalance: '1,000' })).toEqual({
      body: { alerts: { thresholdsPercent: [50, 90, 100], creditsLowBalance: 1000 } },
    });
    expect(parseAlerts({ thresholdsPercent: '80', creditsLowBalance: '' })).toEqual({
      body: { alerts: { thresholdsPercent: [80] } },
    });
    expect(parseAlerts({ thresholdsPercent: '', creditsLowBalance: '0' })).toEqual({
      body: { alerts: { creditsLowBalance: 0 } },
    });
    expect(parseAlerts({ thresholdsPercent: ' ', creditsLowBalance: '' })).toEqual({ body: { alerts: null } });
  });

  it('refuses what the admin API would, with the sentence for its field', () => {
    for (const thresholdsPercent of ['90, 50', '50, 50', '0', '101', '10, 20, 30, 40, 50, 60', 'eighty', '80.5'])
      expect(parseAlerts({ thresholdsPercent })).toEqual({ error: BILLING_ERRORS.thresholds });
    for (const creditsLowBalance of ['-1', 'lots', '1.5'])
      expect(parseAlerts({ creditsLowBalance })).toEqual({ error: BILLING_ERRORS.lowBalance });
  });

  it('shows the consumer’s own thresholds as typed, the plan’s as empty fields', () => {
    expect(alertsText({ thresholdsPercent: [50, 90, 100], creditsLowBalance: 0 })).toEqual({
      thresholdsPercent: '50, 90, 100',
      creditsLowBalance: '0',
    });
    expect(alertsText(null)).toEqual({ thresholdsPercent: '', creditsLowBalance: '' });
  });
});
