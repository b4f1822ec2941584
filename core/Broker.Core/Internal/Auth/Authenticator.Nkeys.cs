using System.Buffers.Text;
using System.Security.Cryptography;
using NATS.NKeys;

namespace Broker.Core.Internal.Auth;

/// <summary>
/// NKey users (nats-server <c>auth.go</c>): the broker sends a fresh nonce in each connection's INFO, and a client
/// that names an NKey user in CONNECT (<c>nkey</c>) proves it holds the seed with an Ed25519 signature of that nonce
/// (<c>sig</c>, base64url, standard base64 accepted too). Signatures are checked by NATS.NKeys.
/// </summary>
internal sealed partial class Authenticator
{
    // nats-server's nonceRawLen: 11 random bytes, 15 characters of base64url.
    private const int NonceBytes = 11;

    private readonly Dictionary<string, AuthenticatedUser> nkeys = new(StringComparer.Ordinal);

    /// <summary>Whether INFO carries a nonce: some users authenticate with an NKey.</summary>
    public bool NonceRequired => nkeys.Count > 0 || jwtAccounts is not null;

    /// <summary>A fresh nonce for one connection's INFO, as nats-server makes it.</summary>
    public static string CreateNonce()
    {
        Span<byte> raw = stackalloc byte[NonceBytes];
        RandomNumberGenerator.Fill(raw);
        return Base64Url.EncodeToString(raw);
    }

    /// <summary>Whether a CONNECT naming <paramref name="publicKey"/> is checked as an NKey user (it is whenever NKey users exist).</summary>
    public bool ChecksNkey(string? publicKey) => nkeys.Count > 0 && !string.IsNullOrEmpty(publicKey) && jwtAccounts is null;

    /// <summary>
    /// Authenticates an NKey user: the key must be a configured user's, and <paramref name="signature"/> its signature
    /// of <paramref name="nonce"/> (the bytes of the nonce sent in INFO). <see langword="null"/> means Authorization
    /// Violation; <paramref name="failure"/> then says why in nats-server's words (for a debug line), unless the key is
    /// simply not configured.
    /// </summary>
    public AuthenticatedUser? AuthenticateNkey(string publicKey, string? signature, ReadOnlySpan<byte> nonce, out string? failure)
    {
        failure = null;
        if (!nkeys.TryGetValue(publicKey, out var user))
        {
            return null;
        }

        if (string.IsNullOrEmpty(signature))
        {
            failure = "Signature missing";
            return null;
        }

        if (!TryDecodeSignature(signature, out var signed))
        {
            failure = "Signature not valid base64";
            return null;
        }

        try
        {
            using var key = KeyPair.FromPublicKey(publicKey);
            if (nonce.IsEmpty || !key.Verify(nonce.ToArray(), signed))
            {
                failure = "Signature not verified";
                return null;
            }
        }
        catch (NKeysException ex)
        {
            failure = "User nkey not valid: " + ex.Message;
            return null;
        }
        catch (ArgumentException)
        {
            // A signature of the wrong length.
            failure = "Signature not verified";
            return null;
        }

        return user;
    }

    /// <summary>The NKey user <paramref name="publicKey"/> is under this (reloaded) configuration, if still configured.</summary>
    public AuthenticatedUser? ReauthenticateNkey(string publicKey) => nkeys.GetValueOrDefault(publicKey);

    // base64url without padding first, then standard base64, as nats-server.
    private static bool TryDecodeSignature(string text, out byte[] signature)
    {
        try
        {
            signature = Base64Url.DecodeFromChars(text);
            return true;
        }
        catch (FormatException)
        {
        }

        try
        {
            signature = Convert.FromBase64String(text);
            return true;
        }
        catch (FormatException)
        {
            signature = [];
            return false;
        }
    }
}
