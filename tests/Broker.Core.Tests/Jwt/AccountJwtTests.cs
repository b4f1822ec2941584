using Broker.Core.Internal.Jwt;
using Broker.TestKit;
using NATS.NKeys;

namespace Broker.Core.Tests.Jwt;

/// <summary>What an account JWT gives its account: limits (0 stays 0), JetStream limits plain or from the R1 tier, signing keys, revocations.</summary>
public sealed class AccountJwtTests
{
    private static readonly KeyPair Operator = KeyPair.CreatePair(PrefixByte.Operator);
    private static readonly KeyPair Account = KeyPair.CreatePair(PrefixByte.Account);

    private static AccountJwt Compile(Action<AccountClaims> configure)
    {
        var token = TestJwt.Account(Operator, Account.GetPublicKey(), configure);
        Assert.True(JwtToken.TryDecodeAccount(token, out var claims, out var error), error);
        return AccountJwt.Create(token, claims, TimeProvider.System);
    }

    [Fact]
    public void Limits_are_the_claims_with_zero_kept_as_zero()
    {
        var jwt = Compile(c => (c.Nats.Limits.Connections, c.Nats.Limits.Subscriptions, c.Nats.Limits.Payload) = (3, 0, 1024));

        Assert.Equal(new Internal.Accounts.AccountLimits(3, 0, 1024, -1), jwt.Limits());
        Assert.Null(jwt.JetStream());
    }

    [Fact]
    public void JetStream_comes_from_the_plain_limits_when_they_set_storage()
    {
        var jwt = Compile(c => (c.Nats.Limits.MemoryStorage, c.Nats.Limits.DiskStorage, c.Nats.Limits.Streams, c.Nats.Limits.MaxAckPending) = (1024, -1, 5, 0));

        var limits = jwt.JetStream()!;
        Assert.Equal((1024L, -1L, 5, -1, -1L), (limits.MaxMemory, limits.MaxStorage, limits.MaxStreams, limits.MaxAckPending, limits.MemoryMaxStreamBytes));
    }

    [Fact]
    public void JetStream_comes_from_the_R1_tier_when_the_plain_limits_leave_it_off()
    {
        var jwt = Compile(c => c.Nats.Limits.TieredLimits = new()
        {
            ["R1"] = new JetStreamLimitsClaim { MemoryStorage = -1, DiskStorage = 4096, Streams = 2, Consumers = 7 },
            ["R3"] = new JetStreamLimitsClaim { DiskStorage = 1 },
        });

        var limits = jwt.JetStream()!;
        Assert.Equal((-1L, 4096L, 2, 7), (limits.MaxMemory, limits.MaxStorage, limits.MaxStreams, limits.MaxConsumers));
    }

    [Fact]
    public void The_account_and_its_signing_keys_may_issue_users()
    {
        var plain = KeyPair.CreatePair(PrefixByte.Account);
        var jwt = Compile(c => c.Nats.SigningKeys = new() { [plain.GetPublicKey()] = null });

        Assert.True(jwt.HasIssuer(Account.GetPublicKey(), out var scope));
        Assert.Null(scope);
        Assert.True(jwt.HasIssuer(plain.GetPublicKey(), out scope));
        Assert.Null(scope);
        Assert.False(jwt.HasIssuer(KeyPair.CreatePair(PrefixByte.Account).GetPublicKey(), out _));
    }
}
