using Broker.Core.Internal.Jwt;
using Broker.TestKit;
using NATS.NKeys;

namespace Broker.Core.Tests.Jwt;

/// <summary>
/// The claim JSON shapes nats-io/jwt v2 writes (account_claims.go, user_claims.go, types.go, signingkeys.go,
/// creds_utils.go), read into the claims models.
/// </summary>
public sealed class ClaimsShapeTests
{
    private static readonly KeyPair Operator = KeyPair.CreatePair(PrefixByte.Operator);
    private static readonly KeyPair Account = KeyPair.CreatePair(PrefixByte.Account);
    private static readonly KeyPair SigningKey = KeyPair.CreatePair(PrefixByte.Account);
    private static readonly KeyPair ScopedKey = KeyPair.CreatePair(PrefixByte.Account);

    [Fact]
    public void Operator_claims_carry_signing_keys_and_the_system_account()
    {
        var signing = KeyPair.CreatePair(PrefixByte.Operator);
        var payload = $$$"""
            {"iat":1700000000,"iss":"{{{Operator.GetPublicKey()}}}","name":"O","sub":"{{{Operator.GetPublicKey()}}}",
             "nats":{"signing_keys":["{{{signing.GetPublicKey()}}}"],"system_account":"{{{Account.GetPublicKey()}}}",
                     "operator_service_urls":["nats://localhost:4222"],"strict_signing_key_usage":true,"type":"operator","version":2}}
            """;

        Assert.True(JwtToken.TryDecodeOperator(JwtTokenTests.Sign(JwtTokenTests.Header, payload, Operator), out var claims, out var error), error);

        Assert.Equal([signing.GetPublicKey()], claims.Nats.SigningKeys);
        Assert.Equal(Account.GetPublicKey(), claims.Nats.SystemAccount);
        Assert.True(claims.Nats.StrictSigningKeyUsage);
        Assert.Equal(["nats://localhost:4222"], claims.Nats.OperatorServiceUrls);
    }

    [Fact]
    public void Account_claims_carry_limits_tiers_signing_keys_revocations_imports_exports_and_default_permissions()
    {
        var other = KeyPair.CreatePair(PrefixByte.Account);
        var payload = $$$"""
            {"iat":1700000000,"iss":"{{{Operator.GetPublicKey()}}}","name":"A","sub":"{{{Account.GetPublicKey()}}}",
             "nats":{
               "imports":[{"name":"s","subject":"svc.>","account":"{{{other.GetPublicKey()}}}","to":"other.svc.>","type":"service","share":true},
                          {"subject":"ev.>","account":"{{{other.GetPublicKey()}}}","local_subject":"mine.>","type":"stream","token":"abc"}],
               "exports":[{"name":"req","subject":"req.*","type":"service","token_req":true,"response_type":"Stream","response_threshold":2000000000,
                           "service_latency":{"sampling":50,"results":"lat"},"account_token_position":2,"revocations":{"{{{other.GetPublicKey()}}}":1700000001}},
                          {"subject":"pub.>","type":"stream","advertise":true}],
               "limits":{"subs":100,"data":-1,"payload":1024,"imports":-1,"exports":-1,"wildcards":true,"disallow_bearer":true,"conn":5,"leaf":-1,
                         "mem_storage":1048576,"disk_storage":-1,"streams":10,"consumer":-1,"max_ack_pending":1000,"mem_max_stream_bytes":4096,
                         "disk_max_stream_bytes":8192,"max_bytes_required":true,
                         "tiered_limits":{"R1":{"mem_storage":-1,"disk_storage":2048,"streams":3,"consumer":4} } },
               "signing_keys":["{{{SigningKey.GetPublicKey()}}}",
                               {"kind":"user_scope","key":"{{{ScopedKey.GetPublicKey()}}}","role":"dev",
                                "template":{"pub":{"allow":["dev.{{name()}}.>"]},"sub":{"deny":["secret.>"]},"subs":-1,"data":-1,"payload":-1}}],
               "revocations":{"UABC":1700000000,"*":1600000000},
               "default_permissions":{"pub":{"allow":["a.>"],"deny":["a.b"]},"sub":{"allow":["_INBOX.>"]},"resp":{"max":1,"ttl":1000000000}},
               "mappings":{"m.>":[{"subject":"n.>","weight":40},{"subject":"o.>","weight":60,"cluster":"c1"}]},
               "description":"an account","type":"account","version":2}}
            """;

        Assert.True(JwtToken.TryDecodeAccount(JwtTokenTests.Sign(JwtTokenTests.Header, payload, Operator), out var claims, out var error), error);

        var nats = claims.Nats;
        Assert.Equal(100, nats.Limits.Subscriptions);
        Assert.Equal(-1, nats.Limits.Data);
        Assert.Equal(1024, nats.Limits.Payload);
        Assert.Equal(5, nats.Limits.Connections);
        Assert.True(nats.Limits.DisallowBearer);
        Assert.True(nats.Limits.WildcardExports);
        Assert.Equal(1048576, nats.Limits.MemoryStorage);
        Assert.Equal(-1, nats.Limits.DiskStorage);
        Assert.Equal(10, nats.Limits.Streams);
        Assert.Equal(1000, nats.Limits.MaxAckPending);
        Assert.Equal(4096, nats.Limits.MemoryMaxStreamBytes);
        Assert.Equal(8192, nats.Limits.DiskMaxStreamBytes);
        Assert.True(nats.Limits.MaxBytesRequired);
        var r1 = nats.Limits.TieredLimits!["R1"];
        Assert.Equal((-1L, 2048L, 3L, 4L), (r1.MemoryStorage, r1.DiskStorage, r1.Streams, r1.Consumers));

        Assert.Equal(2, nats.SigningKeys!.Count);
        Assert.Null(nats.SigningKeys[SigningKey.GetPublicKey()]);
        var scope = nats.SigningKeys[ScopedKey.GetPublicKey()]!;
        Assert.Equal("dev", scope.Role);
        Assert.Equal(["dev.{{name()}}.>"], scope.Template.Publish!.Allow);
        Assert.Equal(["secret.>"], scope.Template.Subscribe!.Deny);

        Assert.True(ClaimsValidator.IsRevoked(nats.Revocations, "UABC", 1700000000));
        Assert.False(ClaimsValidator.IsRevoked(nats.Revocations, "UABC", 1700000001));
        Assert.True(ClaimsValidator.IsRevoked(nats.Revocations, "UOTHER", 1600000000));
        Assert.False(ClaimsValidator.IsRevoked(nats.Revocations, "UOTHER", 1600000001));

        Assert.Equal(2, nats.Imports!.Count);
        Assert.Equal(("service", "svc.>", "other.svc.>", true), (nats.Imports[0].Type, nats.Imports[0].Subject, nats.Imports[0].To, nats.Imports[0].Share));
        Assert.Equal(("stream", "mine.>", "abc"), (nats.Imports[1].Type, nats.Imports[1].LocalSubject, nats.Imports[1].Token));
        Assert.Equal(2, nats.Exports!.Count);
        var service = nats.Exports[0];
        Assert.Equal(("service", true, "Stream", 2_000_000_000L, 2u), (service.Type, service.TokenRequired, service.ResponseType, service.ResponseThreshold, service.AccountTokenPosition));
        Assert.Equal("lat", service.Latency!.Results);
        Assert.Equal(1700000001, service.Revocations![other.GetPublicKey()]);
        Assert.True(nats.Exports[1].Advertise);

        Assert.Equal(["a.>"], nats.DefaultPermissions!.Publish!.Allow);
        Assert.Equal(["a.b"], nats.DefaultPermissions.Publish.Deny);
        Assert.Equal((1, 1_000_000_000L), (nats.DefaultPermissions.Response!.MaxMessages, nats.DefaultPermissions.Response.Expires));
        Assert.Equal(2, nats.Mappings!["m.>"].Count);
        Assert.Equal(("o.>", (byte)60, "c1"), (nats.Mappings["m.>"][1].Subject, nats.Mappings["m.>"][1].Weight, nats.Mappings["m.>"][1].Cluster));
    }

    [Fact]
    public void An_unknown_signing_key_scope_is_refused()
    {
        var payload = $$$"""
            {"iss":"{{{Operator.GetPublicKey()}}}","sub":"{{{Account.GetPublicKey()}}}",
             "nats":{"signing_keys":[{"kind":"admin_scope","key":"{{{ScopedKey.GetPublicKey()}}}"}],"type":"account","version":2}}
            """;

        Assert.False(JwtToken.TryDecodeAccount(JwtTokenTests.Sign(JwtTokenTests.Header, payload, Operator), out _, out var error));
        Assert.Contains("unknown signing key scope", error, StringComparison.Ordinal);
    }

    [Fact]
    public void User_claims_carry_permissions_limits_times_bearer_and_connection_types()
    {
        var payload = $$$"""
            {"iat":1700000000,"iss":"{{{SigningKey.GetPublicKey()}}}","name":"u","sub":"UAAA",
             "nats":{"pub":{"allow":["p.>"],"deny":["p.x"]},"sub":{"allow":["s.*"],"deny":["s.y"]},"resp":{"max":3,"ttl":5000000000},
                     "src":["192.168.0.0/16","10.0.0.1/32"],"times":[{"start":"08:00:00","end":"17:30:00"}],"times_location":"Europe/Berlin",
                     "subs":10,"data":2048,"payload":512,"bearer_token":true,"allowed_connection_types":["STANDARD","WEBSOCKET"],
                     "issuer_account":"{{{Account.GetPublicKey()}}}","tags":["t1"],"type":"user","version":2}}
            """;

        Assert.True(JwtToken.TryDecodeUser(JwtTokenTests.Sign(JwtTokenTests.Header, payload, SigningKey), out var claims, out var error), error);

        var nats = claims.Nats;
        Assert.Equal(Account.GetPublicKey(), claims.Account);
        Assert.Equal(["p.>"], nats.Publish!.Allow);
        Assert.Equal(["p.x"], nats.Publish.Deny);
        Assert.Equal(["s.*"], nats.Subscribe!.Allow);
        Assert.Equal(["s.y"], nats.Subscribe.Deny);
        Assert.Equal((3, 5_000_000_000L), (nats.Response!.MaxMessages, nats.Response.Expires));
        Assert.Equal(["192.168.0.0/16", "10.0.0.1/32"], nats.Source);
        Assert.Equal(("08:00:00", "17:30:00"), (nats.Times![0].Start, nats.Times[0].End));
        Assert.Equal("Europe/Berlin", nats.Locale);
        Assert.Equal((10L, 2048L, 512L), (nats.Subscriptions, nats.Data, nats.Payload));
        Assert.True(nats.BearerToken);
        Assert.Equal(["STANDARD", "WEBSOCKET"], nats.AllowedConnectionTypes);
        Assert.Equal(["t1"], nats.Tags);
        Assert.False(nats.HasEmptyPermissionsAndLimits());
        Assert.Null(ClaimsValidator.CheckUser(claims, DateTimeOffset.UtcNow));
    }

    [Fact]
    public void Src_may_be_one_comma_separated_string()
    {
        var payload = $$$"""{"iss":"{{{Account.GetPublicKey()}}}","sub":"UAAA","nats":{"src":"192.168.1.0/24, 10.0.0.0/8,","type":"user","version":2}}""";

        Assert.True(JwtToken.TryDecodeUser(JwtTokenTests.Sign(JwtTokenTests.Header, payload, Account), out var claims, out var error), error);

        Assert.Equal(["192.168.1.0/24", "10.0.0.0/8"], claims.Nats.Source);
    }

    [Theory]
    [InlineData("""{"src":["300.1.1.1/8"]}""", "invalid cidr \"300.1.1.1/8\" in user src limits")]
    [InlineData("""{"times":[{"end":"10:00:00"}]}""", "time ranges start must contain a start")]
    [InlineData("""{"times":[{"start":"25:00:00","end":"10:00:00"}]}""", "start in time range is invalid \"25:00:00\"")]
    [InlineData("""{"times":[{"start":"09:00:00"}]}""", "time ranges end must contain an end")]
    [InlineData("""{"times_location":"Nowhere/Town"}""", "could not parse iana time zone by name: unknown time zone Nowhere/Town")]
    public void Invalid_user_limits_are_reported(string limits, string expected)
    {
        var claims = System.Text.Json.JsonSerializer.Deserialize("{\"nats\":" + limits + "}", ClaimsJsonContext.Default.UserClaims)!;

        Assert.Equal(expected, ClaimsValidator.CheckUser(claims, DateTimeOffset.UtcNow));
    }

    [Fact]
    public void Encoded_account_claims_write_signing_keys_as_nats_io_jwt_does()
    {
        var token = TestJwt.Account(Operator, Account.GetPublicKey(), c => c.Nats.SigningKeys = new()
        {
            [SigningKey.GetPublicKey()] = null,
            [ScopedKey.GetPublicKey()] = new UserScopeClaim { Key = ScopedKey.GetPublicKey(), Role = "r" },
        });

        Assert.True(JwtToken.TryDecodeAccount(token, out var claims, out var error), error);
        Assert.Null(claims.Nats.SigningKeys![SigningKey.GetPublicKey()]);
        Assert.Equal("r", claims.Nats.SigningKeys[ScopedKey.GetPublicKey()]!.Role);
        Assert.Equal(-1, claims.Nats.SigningKeys[ScopedKey.GetPublicKey()]!.Template.Payload);
        Assert.Equal(-1, claims.Nats.Limits.Connections);
        Assert.True(claims.Nats.Limits.WildcardExports);
        Assert.Equal(0, claims.Nats.Limits.MemoryStorage);
    }

    [Fact]
    public void Creds_files_round_trip_and_read_nsc_output()
    {
        var user = KeyPair.CreatePair(PrefixByte.User);
        var jwt = TestJwt.User(Account, user.GetPublicKey());

        var (readJwt, seed) = CredsFile.Parse(TestJwt.Creds(jwt, user));

        Assert.Equal(jwt, readJwt);
        Assert.Equal(user.GetSeed(), seed);
        Assert.Equal(jwt, CredsFile.Parse(TestJwt.Creds(jwt, user).Replace("\n", "\r\n", StringComparison.Ordinal)).Jwt);
        Assert.Throws<FormatException>(() => CredsFile.Parse("-----BEGIN NATS USER JWT-----\n" + jwt + "\n------END NATS USER JWT------\n"));
    }

    [Fact]
    public void An_operator_file_may_be_decorated_or_bare()
    {
        var jwt = TestJwt.Operator(Operator);

        Assert.Equal(jwt, CredsFile.ParseDecoratedJwt("-----BEGIN TEST OPERATOR JWT-----\n" + jwt + "\n------END TEST OPERATOR JWT------\n"));
        Assert.Equal(jwt, CredsFile.ParseDecoratedJwt("  " + jwt + "\n"));
    }

    [Fact]
    public void A_minted_jwt_carries_only_the_claims_json_not_the_models_helper_members()
    {
        var user = KeyPair.CreatePair(PrefixByte.User);
        var tokens = new[]
        {
            TestJwt.Operator(Operator),
            TestJwt.Account(Operator, Account.GetPublicKey()),
            TestJwt.User(Account, user.GetPublicKey()),
        };

        foreach (var token in tokens)
        {
            var payload = System.Text.Encoding.UTF8.GetString(System.Buffers.Text.Base64Url.DecodeFromChars(token.Split('.')[1]));
            Assert.DoesNotContain("\"Fields\"", payload, StringComparison.Ordinal);
            Assert.DoesNotContain("\"ClaimType\"", payload, StringComparison.Ordinal);
            Assert.DoesNotContain("\"IssuerPrefix\"", payload, StringComparison.Ordinal);
            Assert.Contains("\"nats\":{", payload, StringComparison.Ordinal);
        }
    }
}
