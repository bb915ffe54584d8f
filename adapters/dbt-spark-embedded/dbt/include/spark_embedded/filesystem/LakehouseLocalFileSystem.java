package cdc.lakehouse.filesystem;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.attribute.PosixFilePermission;
import java.util.EnumSet;
import java.util.Set;
import org.apache.hadoop.fs.LocalFileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RawLocalFileSystem;
import org.apache.hadoop.fs.permission.FsPermission;

/**
 * Hadoop's local file system ({@code file:}) as the local target's Spark uses it: Hadoop's own
 * {@link LocalFileSystem}, checksum files included, except that a file's or directory's
 * permission is set through {@code java.nio} in this JVM.
 *
 * <p>Without Hadoop's native library (pyspark ships none), {@link RawLocalFileSystem} sets the
 * permission of every file and directory it creates by starting a {@code chmod} process: about
 * 660 processes for a build of the sample data, each one forked from a JVM of several gigabytes
 * (docs/benchmarks.md, "Hadoop's local file system without a process per file"). Every path
 * that creates a file or directory ends in {@link RawLocalFileSystem#setPermission}, so that is
 * the one method replaced. The nine read, write and execute bits are set as {@code chmod} sets
 * them; a permission with the sticky bit goes to Hadoop's own method, as before.
 */
public class LakehouseLocalFileSystem extends LocalFileSystem {
  public LakehouseLocalFileSystem() {
    super(new Raw());
  }

  /** Hadoop's raw local file system with {@link #setPermission} through {@code java.nio}. */
  public static class Raw extends RawLocalFileSystem {
    // Bit i of a permission (others' execute is bit 0, the owner's read bit 8).
    private static final PosixFilePermission[] BITS = {
      PosixFilePermission.OTHERS_EXECUTE, PosixFilePermission.OTHERS_WRITE,
      PosixFilePermission.OTHERS_READ, PosixFilePermission.GROUP_EXECUTE,
      PosixFilePermission.GROUP_WRITE, PosixFilePermission.GROUP_READ,
      PosixFilePermission.OWNER_EXECUTE, PosixFilePermission.OWNER_WRITE,
      PosixFilePermission.OWNER_READ,
    };

    @Override
    public void setPermission(Path path, FsPermission permission) throws IOException {
      int mode = permission.toShort();
      if ((mode & ~0777) != 0) {
        super.setPermission(path, permission);
        return;
      }
      Set<PosixFilePermission> bits = EnumSet.noneOf(PosixFilePermission.class);
      for (int bit = 0; bit < BITS.length; bit++) {
        if ((mode & (1 << bit)) != 0) {
          bits.add(BITS[bit]);
        }
      }
      Files.setPosixFilePermissions(pathToFile(path).toPath(), bits);
    }
  }
}
