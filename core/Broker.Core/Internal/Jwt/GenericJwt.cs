using System.Buffers.Text;
using System.Diagnostics.CodeAnalysis;
using System.Text;
using System.Text.Json;
using NATS.NKeys;

namespace Broker.Core.Internal.Jwt;

/// <summary>
/// A JWT of any claim type, decoded and its signature checked against its <c>iss</c> (nats-io/jwt's
/// <c>DecodeGeneric</c>): the registered claims and the <c>nats</c> object as JSON. The directory store compares JWTs
/// by <c>jti</c> and <c>iat</c> with it, and <c>$SYS.REQ.CLAIMS.DELETE</c> reads its operator-signed request.
/// </summary>
internal sealed class GenericJwt
{
    public string? Subject { get; private init; }

    public string? Issuer { get; private init; }

    public string? Id { get; private init; }

    public long IssuedAt { get; private init; }

    public long Expires { get; private init; }

    /// <summary>The <c>nats</c> object, or an undefined element when there is none.</summary>
    public JsonElement Nats { get; private init; }

    public static bool TryDecode(string token, [NotNullWhen(true)] out GenericJwt? claims, [NotNullWhen(false)] out string? error)
    {
        claims = null;
        var parts = token.Trim().Split('.');
        if (parts.Length != 3)
        {
            error = "expected 3 chunks";
            return false;
        }

        byte[] payload;
        byte[] signature;
        try
        {
            payload = Base64Url.DecodeFromChars(parts[1]);
            signature = Base64Url.DecodeFromChars(parts[2]);
        }
        catch (FormatException)
        {
            error = "illegal base64 data";
            return false;
        }

        try
        {
            using var document = JsonDocument.Parse(payload);
            var root = document.RootElement;
            if (root.ValueKind != JsonValueKind.Object)
            {
                error = "claims are not an object";
                return false;
            }

            claims = new GenericJwt
            {
                Subject = String(root, "sub"),
                Issuer = String(root, "iss"),
                Id = String(root, "jti"),
                IssuedAt = Number(root, "iat"),
                Expires = Number(root, "exp"),
                Nats = root.TryGetProperty("nats", out var nats) ? nats.Clone() : default,
            };
        }
        catch (JsonException ex)
        {
            error = ex.Message;
            return false;
        }

        var signed = Encoding.ASCII.GetBytes(token.Trim().AsSpan(0, parts[0].Length + 1 + parts[1].Length).ToString());
        if (!Verify(claims.Issuer, signed, signature))
        {
            claims = null;
            error = "claim failed V2 signature verification";
            return false;
        }

        error = null;
        return true;
    }

    private static string? String(JsonElement root, string name) =>
        root.TryGetProperty(name, out var value) && value.ValueKind == JsonValueKind.String ? value.GetString() : null;

    private static long Number(JsonElement root, string name) =>
        root.TryGetProperty(name, out var value) && value.ValueKind == JsonValueKind.Number && value.TryGetInt64(out var number) ? number : 0;

    private static bool Verify(string? issuer, byte[] signed, byte[] signature)
    {
        if (string.IsNullOrEmpty(issuer) || signature.Length != 64)
        {
            return false;
        }

        try
        {
            using var key = KeyPair.FromPublicKey(issuer);
            return key.Verify(signed, signature);
        }
        catch (NKeysException)
        {
            return false;
        }
        catch (ArgumentException)
        {
            return false;
        }
    }
}
