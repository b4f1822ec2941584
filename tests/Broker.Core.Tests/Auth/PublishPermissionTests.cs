using System.Text;
using Broker.Core.Auth;
using Broker.Core.Internal.Auth;

namespace Broker.Core.Tests.Auth;

public class PublishPermissionTests
{
    [Theory]
    // allow list only: a match is required
    [InlineData("foo.bar", "", "foo.bar", true)]
    [InlineData("foo.bar", "", "foo.baz", false)]
    [InlineData("foo.*", "", "foo.baz", true)]
    [InlineData("foo.*", "", "foo.baz.qux", false)]
    [InlineData("foo.*", "", "foo", false)]
    [InlineData("foo.>", "", "foo.a.b.c", true)]
    [InlineData("foo.>", "", "foo", false)]
    [InlineData("*.bar,baz", "", "x.bar", true)]
    [InlineData("*.bar,baz", "", "baz", true)]
    [InlineData("*.bar,baz", "", "baz.bar.x", false)]
    [InlineData(">", "", "anything.at.all", true)]
    // deny list only: everything not denied
    [InlineData("", "secret.>", "public.x", true)]
    [InlineData("", "secret.>", "secret.x", false)]
    [InlineData("", "secret.>", "secret", true)]
    [InlineData("", "*.admin", "a.admin", false)]
    [InlineData("", "*.admin", "a.b.admin", true)]
    // both: deny wins
    [InlineData("app.>", "app.secret", "app.public", true)]
    [InlineData("app.>", "app.secret", "app.secret", false)]
    [InlineData("app.>", "app.*.internal", "app.x.internal", false)]
    [InlineData("app.>", "app.*.internal", "app.x.internal.y", true)]
    [InlineData("app.>", "app.*.internal", "other", false)]
    public void Allow_and_deny_lists(string allow, string deny, string subject, bool expected)
    {
        var permissions = Create(allow, deny);
        var bytes = Encoding.UTF8.GetBytes(subject);

        Assert.Equal(expected, permissions.CanPublish(bytes));
        Assert.Equal(expected, permissions.CanPublish(bytes)); // the cached answer is the same
        Assert.Equal(expected, permissions.Template.IsPublishAllowed(bytes));
    }

    [Fact]
    public void Without_publish_rules_everything_is_allowed_and_nothing_cached()
    {
        var permissions = PermissionsTemplate.Compile(new PermissionsOptions
        {
            Subscribe = new SubjectPermissionOptions { Allow = ["x"] },
        }).CreateForConnection();

        Assert.False(permissions.Template.RestrictsPublish);
        Assert.True(permissions.CanPublish("any.subject"u8));
        Assert.Equal(0, permissions.PublishCacheCount);
    }

    [Fact]
    public void Empty_lists_impose_nothing()
    {
        var permissions = PermissionsTemplate.Compile(new PermissionsOptions { Publish = new SubjectPermissionOptions() }).CreateForConnection();
        Assert.True(permissions.CanPublish("x"u8));
    }

    [Fact]
    public void Cache_is_bounded_and_stays_correct_after_pruning()
    {
        var permissions = Create("even.>", "");
        for (var i = 0; i < 1000; i++)
        {
            var subject = Encoding.UTF8.GetBytes((i % 2 == 0 ? "even." : "odd.") + i);
            Assert.Equal(i % 2 == 0, permissions.CanPublish(subject));
            Assert.InRange(permissions.PublishCacheCount, 1, ClientPermissions.MaxPublishCacheSize);
        }

        Assert.True(permissions.CanPublish("even.0"u8));
        Assert.False(permissions.CanPublish("odd.1"u8));
    }

    [Fact]
    public void Each_connection_has_its_own_cache()
    {
        var template = PermissionsTemplate.Compile(Options("a.>", ""));
        var first = template.CreateForConnection();
        var second = template.CreateForConnection();

        first.CanPublish("a.b"u8);
        Assert.Equal(1, first.PublishCacheCount);
        Assert.Equal(0, second.PublishCacheCount);
    }

    [Fact]
    public void Cache_hits_allocate_nothing()
    {
        var withResponses = Options("allowed.>", "allowed.denied");
        withResponses.AllowResponses = new ResponsePermissionOptions();
        var connections = new[] { Create("allowed.>", "allowed.denied"), PermissionsTemplate.Compile(withResponses).CreateForConnection() };
        var allowed = "allowed.subject"u8.ToArray();
        var denied = "allowed.denied"u8.ToArray();

        foreach (var permissions in connections)
        {
            // Warm up: fill the cache and let the JIT settle.
            for (var i = 0; i < 200; i++)
            {
                permissions.CanPublish(allowed);
                permissions.CanPublish(denied);
            }

            var results = 0;
            var before = GC.GetAllocatedBytesForCurrentThread();
            for (var i = 0; i < 10_000; i++)
            {
                results += permissions.CanPublish(allowed) ? 1 : 0;
                results += permissions.CanPublish(denied) ? 1 : 0;
            }

            var allocated = GC.GetAllocatedBytesForCurrentThread() - before;
            Assert.Equal(10_000, results);
            Assert.Equal(0, allocated);
        }
    }

    internal static PermissionsOptions Options(string allow, string deny) => new()
    {
        Publish = new SubjectPermissionOptions { Allow = List(allow), Deny = List(deny) },
    };

    internal static List<string> List(string csv) => csv.Length == 0 ? [] : [.. csv.Split(',')];

    private static ClientPermissions Create(string allow, string deny) =>
        PermissionsTemplate.Compile(Options(allow, deny)).CreateForConnection();
}
