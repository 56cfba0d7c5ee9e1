import { TokenVault } from './token-vault';

describe('TokenVault', () => {
  it('seals a token so that the sealed value does not contain it, and opens it with the same secret only', () => {
    const vault = new TokenVault('s'.repeat(32));
    const sealed = vault.seal('adm_secret-token-value');
    expect(sealed).not.toContain('adm_');
    expect(vault.seal('adm_secret-token-value')).not.toBe(sealed); // a fresh IV each time
    expect(vault.open(sealed)).toBe('adm_secret-token-value');
    expect(new TokenVault('t'.repeat(32)).open(sealed)).toBeUndefined();
    const [iv, tag, body] = sealed.split('.');
    // Flip one bit of the ciphertext itself: editing base64 characters may leave the decoded bytes unchanged.
    const tampered = Buffer.from(body, 'base64url');
    tampered[0] ^= 1;
    expect(vault.open([iv, tag, tampered.toString('base64url')].join('.'))).toBeUndefined();
    expect(vault.open('garbage')).toBeUndefined();
  });
});
