using Broker.Core.Auth;
using Broker.Core.Internal.Auth;
using Microsoft.Extensions.Logging;

namespace Broker.Core.Tests.Auth;

public class AuthenticatorTests
{
    // "password" at cost 4 (crypt(3) vector, see BcryptPasswordTests).
    private const string PasswordHash = "$2b$04$saltsaltsaltsaltsaltsOh9rCgsOi8IYqmtEm1s6duinLpzU3Bba";

    [Fact]
    public void Without_configuration_everyone_is_anonymous_with_full_permissions()
    {
        var auth = new Authenticator(new AuthorizationOptions());

        Assert.False(auth.AuthRequired);
        foreach (var (user, pass, token) in new[] { ((string?)null, (string?)null, (string?)null), ("a", "b", "c") })
        {
            var result = auth.Authenticate(user, pass, token);
            Assert.NotNull(result);
            Assert.Null(result.Name);
            Assert.Null(result.Permissions);
        }
    }

    [Fact]
    public void Empty_strings_count_as_not_configured()
    {
        var auth = new Authenticator(new AuthorizationOptions { Token = "" });
        Assert.False(auth.AuthRequired);
        Assert.NotNull(auth.Authenticate(null, null, null));
    }

    [Theory]
    [InlineData("s3cret")]
    [InlineData(PasswordHash)]
    public void Token_must_match(string configured)
    {
        var expected = configured == PasswordHash ? "password" : configured;
        var auth = new Authenticator(new AuthorizationOptions { Token = configured });

        Assert.True(auth.AuthRequired);
        var ok = auth.Authenticate(null, null, expected);
        Assert.NotNull(ok);
        Assert.Null(ok.Name);
        Assert.Null(ok.Permissions);
        Assert.Null(auth.Authenticate(null, null, expected + "x"));
        Assert.Null(auth.Authenticate(null, null, expected[..^1]));
        Assert.Null(auth.Authenticate(null, null, null));
        Assert.Null(auth.Authenticate("user", expected, null)); // the token is only accepted as auth_token
    }

    [Fact]
    public void A_bcrypt_token_is_not_accepted_verbatim()
    {
        var auth = new Authenticator(new AuthorizationOptions { Token = PasswordHash });
        Assert.Null(auth.Authenticate(null, null, PasswordHash));
    }

    [Theory]
    [InlineData("pw")]
    [InlineData(PasswordHash)]
    public void Single_user_needs_name_and_password(string configured)
    {
        var password = configured == PasswordHash ? "password" : configured;
        var auth = new Authenticator(new AuthorizationOptions { User = "derek", Password = configured });

        var ok = auth.Authenticate("derek", password, null);
        Assert.NotNull(ok);
        Assert.Equal("derek", ok.Name);
        Assert.Null(ok.Permissions);
        Assert.Null(auth.Authenticate("derek", password + "x", null));
        Assert.Null(auth.Authenticate("Derek", password, null));
        Assert.Null(auth.Authenticate("derek", null, null));
        Assert.Null(auth.Authenticate(null, password, null));
        Assert.Null(auth.Authenticate(null, null, password));
    }

    [Fact]
    public void Users_are_looked_up_by_name()
    {
        var auth = new Authenticator(Users());

        Assert.Equal("alice", auth.Authenticate("alice", "a-pass", null)?.Name);
        Assert.Equal("bob", auth.Authenticate("bob", "password", null)?.Name);
        Assert.Null(auth.Authenticate("alice", "password", null));
        Assert.Null(auth.Authenticate("bob", "a-pass", null));
        Assert.Null(auth.Authenticate("bob", PasswordHash, null));
        Assert.Null(auth.Authenticate("mallory", "a-pass", null));
        Assert.Null(auth.Authenticate(null, "a-pass", null));
        Assert.Null(auth.Authenticate(null, null, "a-pass"));
        Assert.Null(auth.Authenticate(null, null, null)); // no no_auth_user here
    }

    [Fact]
    public void A_user_without_password_accepts_only_an_empty_one()
    {
        // nats-server 2.9.10 accepts {user: np} with no or an empty password and refuses any other.
        var auth = new Authenticator(Users());

        Assert.Equal("guest", auth.Authenticate("guest", null, null)?.Name);
        Assert.Equal("guest", auth.Authenticate("guest", "", null)?.Name);
        Assert.Null(auth.Authenticate("guest", "x", null));
    }

    [Fact]
    public void No_auth_user_binds_connections_without_any_credentials()
    {
        var options = Users();
        options.NoAuthUser = "bob"; // a bcrypt user: nats-server 2.9.10 fails this case, we bind without a check
        var auth = new Authenticator(options);

        var bound = auth.Authenticate(null, null, null);
        Assert.NotNull(bound);
        Assert.Equal("bob", bound.Name);
        Assert.Same(bound, auth.Authenticate("", "", ""));

        // Any credential sent means the normal rules apply.
        Assert.Null(auth.Authenticate(null, "password", null));
        Assert.Null(auth.Authenticate(null, null, "password"));
        Assert.Null(auth.Authenticate("bob", "wrong", null));
        Assert.Equal("alice", auth.Authenticate("alice", "a-pass", null)?.Name);
    }

    [Fact]
    public void Users_without_permissions_get_the_defaults()
    {
        var options = Users();
        options.DefaultPermissions = new PermissionsOptions { Publish = new SubjectPermissionOptions { Allow = ["defaults.>"] } };
        var auth = new Authenticator(options);

        var alice = auth.Authenticate("alice", "a-pass", null)!.Permissions;
        var bob = auth.Authenticate("bob", "password", null)!.Permissions;
        var guest = auth.Authenticate("guest", null, null)!.Permissions;

        Assert.NotNull(bob);
        Assert.Same(bob, guest); // compiled once, shared
        Assert.True(bob.IsPublishAllowed("defaults.x"u8));
        Assert.False(bob.IsPublishAllowed("own.x"u8));
        Assert.NotNull(alice);
        Assert.True(alice.IsPublishAllowed("own.x"u8));
        Assert.False(alice.IsPublishAllowed("defaults.x"u8));
    }

    [Fact]
    public void Default_permissions_do_not_apply_to_the_single_user()
    {
        var auth = new Authenticator(new AuthorizationOptions
        {
            User = "u",
            Password = "p",
            DefaultPermissions = new PermissionsOptions { Publish = new SubjectPermissionOptions { Allow = ["x"] } },
        });

        Assert.Null(auth.Authenticate("u", "p", null)!.Permissions);
    }

    [Fact]
    public void Without_default_permissions_users_have_full_permissions()
    {
        var auth = new Authenticator(Users());
        Assert.Null(auth.Authenticate("bob", "password", null)!.Permissions);
        Assert.NotNull(auth.Authenticate("alice", "a-pass", null)!.Permissions);
    }

    [Fact]
    public void Warns_once_about_plaintext_passwords()
    {
        var logger = new RecordingLogger();
        _ = new Authenticator(Users(), logger);

        var warning = Assert.Single(logger.Entries);
        Assert.Equal(LogLevel.Warning, warning.Level);
        Assert.Equal(1100, warning.Id.Id);
        Assert.Equal("Plaintext passwords detected, use nkeys or bcrypt", warning.Message);
    }

    [Fact]
    public void Does_not_warn_for_hashed_passwords_or_tokens()
    {
        var logger = new RecordingLogger();
        _ = new Authenticator(new AuthorizationOptions { Users = [new UserOptions { User = "bob", Password = PasswordHash }] }, logger);
        _ = new Authenticator(new AuthorizationOptions { User = "u", Password = PasswordHash }, logger);
        _ = new Authenticator(new AuthorizationOptions { Token = "plain-token" }, logger);
        Assert.Empty(logger.Entries);

        _ = new Authenticator(new AuthorizationOptions { User = "u", Password = "plain" }, logger);
        Assert.Single(logger.Entries);
    }

    [Theory]
    [InlineData("token-and-users")]
    [InlineData("unknown-no-auth-user")]
    [InlineData("bad-permission")]
    [InlineData("queue-in-publish")]
    public void Invalid_options_are_refused(string which)
    {
        var options = Users();
        switch (which)
        {
            case "token-and-users":
                options.Token = "t";
                break;
            case "unknown-no-auth-user":
                options.NoAuthUser = "nobody";
                break;
            case "bad-permission":
                options.Users[0].Permissions!.Subscribe = new SubjectPermissionOptions { Allow = ["foo..bar"] };
                break;
            default:
                options.Users[0].Permissions!.Publish = new SubjectPermissionOptions { Allow = ["foo q"] };
                break;
        }

        Assert.Throws<InvalidOperationException>(() => new Authenticator(options));
    }

    private static AuthorizationOptions Users() => new()
    {
        Users =
        [
            new UserOptions
            {
                User = "alice",
                Password = "a-pass",
                Permissions = new PermissionsOptions { Publish = new SubjectPermissionOptions { Allow = ["own.>"] } },
            },
            new UserOptions { User = "bob", Password = PasswordHash },
            new UserOptions { User = "guest" },
        ],
    };
}
